#include "cli/use_hint.h"

#include "cli/context.h"
#include "store/resolve.h"
#include "spec/spec.h"

namespace cvm::cli {

void use_hint(const Store& store, const std::vector<AddedEntry>& added) {
    std::string toolkit, cudnn, nccl;
    unsigned major = 0;
    for (const auto& a : added) {
        if (a.kind == Kind::Cuda) {
            toolkit = a.id;
        } else if (a.kind == Kind::Nccl) {
            if (auto n = parse_nccl_id(a.id)) {
                nccl = n->version.str();
                if (!major) major = n->cuda.major();
            }
        } else if (auto c = parse_cudnn_id(a.id)) {
            cudnn = c->version.str();
            if (!major) major = c->cuda.major();
        }
    }
    // A build serves its CUDA major: the major, not the minor it was built with (an NCCL built
    // with 13.5 serves a 13.0 toolkit, and "13.5" names no installed toolkit).
    if (toolkit.empty() && major) toolkit = std::to_string(major);
    if (toolkit.empty()) return;
    const std::string spec = toolkit + (cudnn.empty() ? "" : "+" + cudnn) + (nccl.empty() ? "" : "+nccl" + nccl);
    try {
        resolve(store, parse_spec(spec));
    } catch (const std::exception&) {
        if (major && toolkit == std::to_string(major))
            return hint("cvm install " + toolkit, "no CUDA " + toolkit + " toolkit is installed; then cvm use " + spec);
        return; // nothing cvm could suggest would resolve
    }
    hint("cvm use " + spec, "selects it for this folder; -g for everywhere");
}

} // namespace cvm::cli
