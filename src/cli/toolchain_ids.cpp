#include "toolchain_ids.h"

#include "registry/registry.h"

namespace cvm::cli {

ToolkitIdentity toolkit_identity(const ToolkitFacts& t) {
    ToolkitIdentity id;
    if (t.release) return toolkit_identity_from_files(t);
    // A toolkit assembled from wheels (or an old one without version.json): its components'
    // versions name the release in the registry.
    if (t.cudart || t.nvcc) {
        try {
            auto reg = registry::load_default_registry();
            auto matches = registry::find_cuda_by_components(reg, t.cudart, t.nvcc);
            std::string components = "cudart " + (t.cudart ? t.cudart->str() : std::string("?")) +
                                     " / nvcc " + (t.nvcc ? t.nvcc->str() : std::string("?"));
            if (matches.size() == 1) {
                id.version = matches.front()->version;
                id.how = "version from the registry's release with " + components;
                return id;
            }
            if (matches.size() > 1) {
                // Several releases ship these components (nvcc 13.0.88 is in 13.0.1 and 13.0.2):
                // the newest is taken, and the entry's note says which others it could be.
                const registry::CudaRelease* newest = matches.front();
                std::string all;
                for (const auto* m : matches) {
                    if (newest->version < m->version) newest = m;
                    all += (all.empty() ? "" : ", ") + m->version.str();
                }
                id.version = newest->version;
                id.how = "version from the registry: " + components + " ship in " + all +
                         "; the newest is assumed";
                return id;
            }
        } catch (const std::exception&) {
            // No registry: fall through to what the files alone say.
        }
    }
    return toolkit_identity_from_files(t);
}

} // namespace cvm::cli
