#include "toolchain_ids.h"

namespace cvm::cli {

ToolkitIdentity toolkit_identity(const ToolkitFacts& t) {
    ToolkitIdentity id;
    if (t.release) {
        id.version = t.release;
        id.how = "version from " + t.evidence;
        return id;
    }
    std::optional<Version> mm = t.cuda_h;
    const std::optional<Version>& component = t.cudart ? t.cudart : t.nvcc;
    if (!mm && component) mm = Version{{component->major(), component->minor()}};
    if (!mm) return id;
    // TODO(registry): map the component version to its release through registry/cuda.toml.
    unsigned patch = component && component->parts.size() >= 3 ? component->parts[2] : 0;
    id.version = Version{{mm->major(), mm->minor(), patch}};
    id.how = std::string("version from include/cuda.h and the ") + (t.cudart ? "cudart" : "nvcc") +
             " build number";
    return id;
}

} // namespace cvm::cli
