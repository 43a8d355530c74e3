#include "spec/spec_match.h"

#include <tuple>

namespace cvm {

bool toolkit_matches(const Spec& spec, std::string_view id, const Version& release) {
    if (spec.system) return false;
    if (!spec.name.empty()) return id == spec.name;
    // A name starts with a letter, a toolkit id with a digit: numbers never reach a name.
    return !id.empty() && id.front() >= '0' && id.front() <= '9' && release.has_prefix(spec.cuda);
}

bool toolkit_release_matches(const Spec& spec, const Version& release) {
    return !spec.system && spec.name.empty() && release.has_prefix(spec.cuda);
}

bool cudnn_matches(const Spec& spec, const CudnnId& build) {
    return spec.cudnn && build.version.has_prefix(*spec.cudnn) &&
           (!spec.cudnn_cuda || build.cuda == *spec.cudnn_cuda);
}

bool cudnn_fits(const Spec& spec, const CudnnId& build, const Version& toolkit) {
    return cudnn_matches(spec, build) && build.serves(toolkit);
}

bool cudnn_before(const Spec& spec, const CudnnId& a, const CudnnId& b) {
    const bool a_exact = spec.cudnn && a.version == *spec.cudnn;
    const bool b_exact = spec.cudnn && b.version == *spec.cudnn;
    if (a_exact != b_exact) return a_exact;
    if (a.version != b.version) return b.version < a.version;
    return b.cuda < a.cuda;
}

bool nccl_matches(const Spec& spec, const NcclId& build) {
    return spec.nccl && build.version.has_prefix(*spec.nccl) &&
           (!spec.nccl_cuda || build.cuda.has_prefix(*spec.nccl_cuda));
}

bool nccl_fits(const Spec& spec, const NcclId& build, const Version& toolkit) {
    return nccl_matches(spec, build) && build.serves(toolkit);
}

int pick_nccl(const Spec& spec, const std::vector<NcclId>& builds, const Version& toolkit) {
    auto rank = [&](const NcclId& n) {
        bool exact = n.version == *spec.nccl;
        bool fits = n.cuda.parts.size() < 2 || n.cuda.minor() <= toolkit.minor();
        return std::make_tuple(exact, fits, n.version, fits ? n.cuda : Version{}, n.cuda);
    };
    int best = -1;
    for (size_t i = 0; i < builds.size(); ++i)
        if (nccl_fits(spec, builds[i], toolkit) &&
            (best < 0 || rank(builds[static_cast<size_t>(best)]) < rank(builds[i])))
            best = static_cast<int>(i);
    return best;
}

} // namespace cvm
