// Which downloads `cvm install --locked` makes without being told to trust the lock
// (lock_sources.h).
#include "install/lock_sources.h"

#include "spec/redist_platform.h"
#include "spec/spec.h"
#include "store/store.h"
#include "registry/nccl.h"

namespace cvm::install {

namespace {

bool under(const std::string& url, const std::string& base) {
    return url.size() > base.size() && url.compare(0, base.size(), base) == 0 &&
           url[base.size()] == '/';
}

bool registry_knows(const registry::Registry* reg, const LockedToolchain& tc) {
    if (reg == nullptr) return false;
    if (tc.kind == Kind::Cudnn) return registry::find_cudnn_build(*reg, tc.id).has_value();
    if (tc.kind == Kind::Nccl) {
        auto id = parse_nccl_id(tc.id);
        try {
            auto releases = registry::load_nccl_releases();
            const auto* rel = id ? registry::find_nccl_release(releases, id->version) : nullptr;
            return rel && rel->version == id->version &&
                   registry::choose_nccl_build(*rel, id->cuda);
        } catch (const registry::RegistryError&) {
            return false;
        }
    }
    auto v = parse_toolkit_id(tc.id);
    const registry::CudaRelease* rel = v ? registry::find_cuda_release(*reg, *v) : nullptr;
    return rel != nullptr && rel->version == *v;
}

} // namespace

std::vector<std::string> untrusted_sources(const std::vector<const LockedToolchain*>& to_download,
                                           const registry::Registry* reg,
                                           const std::string& mirror) {
    const std::string nvidia = kNvidiaDownloadBase;
    std::vector<std::string> out;
    for (const auto* tc : to_download) {
        if (tc->imported) continue; // nothing to download
        std::string what = std::string(kind_dir(tc->kind)) + " " + tc->id;
        if (!registry_knows(reg, *tc))
            out.push_back(what + " is not a release in cvm's registry, so nothing vouches for "
                                 "the archives cvm.lock names for it");
        for (const auto& a : tc->archives) {
            std::string fetched = mirrored_url(a.url, mirror);
            if (!under(fetched, nvidia) && !under(fetched, mirror))
                out.push_back(what + ": " + printable(a.url) + " is neither NVIDIA's (" + nvidia +
                              ") nor the mirror's (CVM_MIRROR" +
                              (mirror != nvidia ? "=" + mirror : std::string(" is unset")) + ")");
        }
    }
    return out;
}

} // namespace cvm::install
