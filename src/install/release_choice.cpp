#include "install/release_choice.h"

#include "install/error.h"
#include "registry/registry.h"

namespace cvm::install {

namespace {

// `cuda`: only the archives of the builds for that CUDA, when given.
[[noreturn]] void refuse_legacy_cudnn(const registry::CudnnRelease& rel, const std::string& host,
                                      const std::optional<Version>& cuda) {
    std::string names;
    for (const auto& b : rel.builds)
        if (!cuda || registry::cudnn_build_is_for(b, *cuda))
            for (const auto& n : host.rfind("windows", 0) == 0 ? b.windows_archives : b.linux_archives)
            names += (names.empty() ? "" : ", ") + n;
    fail_input("cuDNN " + rel.version.str() +
                   " predates NVIDIA's manifests; download its archive from NVIDIA (" +
                   (names.empty() ? std::string("cudnn-*.tgz / .zip") : names) +
                   ") and run `cvm install FILE`",
               "not_installable");
}

} // namespace

ToolkitChoice choose_toolkit(const registry::Registry* reg, const Version& requested) {
    if (reg) {
        auto rels = registry::find_cuda_releases(*reg, requested);
        for (auto it = rels.rbegin(); it != rels.rend(); ++it)
            if (registry::how_fetched(**it) == registry::Fetch::Manifest)
                return {(*it)->version, (*it)->manifest};
        // Known, but none has a manifest: 11.2 gets the answer 11.2.2 gets.
        if (!rels.empty())
            fail_input("CUDA " + rels.back()->version.str() +
                           " has no redistributable manifest (NVIDIA publishes them from 11.4.0 "
                           "on); install it with NVIDIA's installer and register it with `cvm "
                           "import DIR`",
                       "not_installable");
    }
    if (requested.parts.size() != 3)
        fail_input("CUDA " + requested.str() +
                       " is not in cvm's release list; give the full version (e.g. 12.4.1)",
                   "not_found");
    // Unknown to the registry: try NVIDIA's manifest anyway.
    return {requested, "redistrib_" + requested.str() + ".json"};
}

std::string choose_cudnn_manifest(const registry::Registry* reg, const Version& requested,
                                  const std::string& cuda, const std::string& host) {
    if (reg) {
        if (const registry::CudnnRelease* rel = registry::find_cudnn_release(*reg, requested)) {
            auto wanted = parse_version(cuda, 1, 2);
            if (registry::how_fetched(*rel) != registry::Fetch::Manifest)
                refuse_legacy_cudnn(*rel, host, wanted);
            if (wanted) {
                std::string variants;
                for (const auto& b : rel->builds) {
                    if (registry::cudnn_build_is_for(b, *wanted)) return rel->manifest;
                    variants += (variants.empty() ? "" : ", ") + b.cuda.str();
                }
                fail_input("cuDNN " + rel->version.str() + " has no build for CUDA " +
                               wanted->str() + " (its builds are for CUDA " + variants +
                               "); see `cvm list --available cudnn " + requested.str() + "`",
                           "not_found");
            }
            return rel->manifest;
        }
    }
    if (requested.parts.size() < 3)
        fail_input("cuDNN " + requested.str() +
                       " is not in cvm's release list; give the version as in "
                       "redistrib_X.Y.Z.json (e.g. 9.1.0)",
                   "not_found");
    return "redistrib_" + std::to_string(requested.parts[0]) + "." +
           std::to_string(requested.parts[1]) + "." + std::to_string(requested.parts[2]) + ".json";
}

std::optional<std::pair<std::string, std::string>>
choose_cudnn_for(const registry::Registry* reg, const Spec& spec, const Version& toolkit,
                 const std::string& host) {
    if (!reg || !spec.cudnn) return std::nullopt;
    auto rels = registry::find_cudnn_releases(*reg, *spec.cudnn);
    if (rels.empty()) return std::nullopt;
    const registry::CudnnRelease* legacy = nullptr;
    for (auto it = rels.rbegin(); it != rels.rend(); ++it)
        for (const auto& b : (*it)->builds) {
            if (spec.cudnn_cuda && b.cuda != *spec.cudnn_cuda) continue;
            if (!registry::cudnn_build_supports(b, toolkit)) continue;
            if (registry::how_fetched(**it) == registry::Fetch::Manifest)
                return std::pair{(*it)->version.str(), b.cuda.str()};
            if (!legacy) legacy = *it;
        }
    if (legacy) refuse_legacy_cudnn(*legacy, host, spec.cudnn_cuda);
    fail_input("no cuDNN " + spec.cudnn->str() +
                   (spec.cudnn_cuda ? " built for CUDA " + spec.cudnn_cuda->str() : std::string()) +
                   " in cvm's release list supports CUDA " + toolkit.str() +
                   "; see `cvm list --available cudnn " + spec.cudnn->str() + "`",
               "not_found");
}

} // namespace cvm::install
