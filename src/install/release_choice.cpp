#include "install/release_choice.h"

#include "spec/spec_match.h"
#include "spec/redist_platform.h"
#include "install/error.h"
#include "registry/registry.h"

namespace cvm::install {

ToolkitChoice choose_toolkit(const registry::Registry* reg, const Version& requested,
                             const std::string& host) {
    const bool windows = is_windows_platform(host);
    if (reg) {
        auto rels = registry::find_cuda_releases(*reg, requested);
        for (auto it = rels.rbegin(); it != rels.rend(); ++it) {
            const registry::CudaRelease& rel = **it;
            if (registry::how_fetched(rel) == registry::Fetch::Manifest) return {rel.version, rel.manifest};
            // Before the manifests: NVIDIA's local installer for this platform, where known.
            const std::string& installer = windows ? rel.installer_windows : rel.installer_linux;
            if (!installer.empty())
                return {rel.version, "", installer, windows ? std::string() : rel.installer_linux_sha256,
                        rel.installer_source};
        }
        // Known, but none cvm can fetch: 11.1 gets the answer 11.1.0 gets.
        if (!rels.empty())
            fail_input("CUDA " + rels.back()->version.str() +
                           " has no redistributable manifest (NVIDIA publishes them from 11.4.0 on) and cvm "
                           "knows no " + (windows ? "Windows" : "Linux") + " installer of it; download NVIDIA's "
                           "local installer and run `cvm install FILE`",
                       "not_installable");
    }
    if (requested.parts.size() != 3)
        fail_input("CUDA " + requested.str() +
                       " is not in cvm's release list; give the full version (e.g. 12.4.1)",
                   "not_found");
    // nvcc's build number (`nvcc --version`: "release 11.8, V11.8.89") is no toolkit release.
    if (auto nvcc = registry::nvcc_build_number(reg, requested))
        fail_input(registry::nvcc_build_line(requested, *nvcc, "cvm install"), "invalid_input");
    // Unknown to the registry: try NVIDIA's manifest anyway.
    return {requested, "redistrib_" + requested.str() + ".json"};
}

std::string choose_cudnn_manifest(const registry::Registry* reg, const Version& requested,
                                  const std::string& cuda, const std::string& host) {
    (void)host;
    if (reg) {
        if (const registry::CudnnRelease* rel = registry::find_cudnn_release(*reg, requested)) {
            auto wanted = parse_version(cuda, 1, 2);
            // Before the manifests: StoreInstaller::install_cudnn's part.
            if (registry::how_fetched(*rel) != registry::Fetch::Manifest)
                fail_input("cuDNN " + rel->version.str() + " predates NVIDIA's manifests; run `cvm install cudnn " +
                               rel->version.str() + " --cuda " + rel->builds.back().cuda.str() + "`",
                           "not_installable");
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
    (void)host;
    if (!reg || !spec.cudnn) return std::nullopt;
    auto rels = registry::find_cudnn_releases(*reg, *spec.cudnn);
    if (rels.empty()) return std::nullopt;
    // The newest release of that prefix with a build for the toolkit: from its manifest, or
    // from NVIDIA's public folder for the releases before the manifests.
    for (auto it = rels.rbegin(); it != rels.rend(); ++it)
        for (auto b = (*it)->builds.rbegin(); b != (*it)->builds.rend(); ++b) {
            if (!cudnn_matches(spec, CudnnId{(*it)->version, b->cuda})) continue;
            if (registry::cudnn_build_supports(*b, toolkit)) return std::pair{(*it)->version.str(), b->cuda.str()};
        }
    fail_input("no cuDNN " + spec.cudnn->str() +
                   (spec.cudnn_cuda ? " built for CUDA " + spec.cudnn_cuda->str() : std::string()) +
                   " in cvm's release list supports CUDA " + toolkit.str() + "; " +
                   cudnn_builds_fitting(*reg, toolkit, *spec.cudnn),
               "not_found");
}

std::string cudnn_builds_fitting(const registry::Registry& reg, const Version& toolkit,
                                 const Version& wanted) {
    auto refs = registry::cudnn_builds_for_cuda(reg, toolkit);
    if (refs.empty()) return "cvm knows no cuDNN build for CUDA " + toolkit.str();
    // Those of the major asked for, when there are any: 8.1 asked, 8.9.7 is the likely answer.
    std::vector<registry::CudnnBuildRef> same;
    for (const auto& r : refs)
        if (r.release->version.major() == wanted.major()) same.push_back(r);
    if (!same.empty()) refs = same;
    // The newest few, newest first: `cvm list --available X.Y` has them all.
    std::string out;
    std::size_t shown = 0;
    for (auto it = refs.rbegin(); it != refs.rend() && shown < 6; ++it, ++shown)
        out += (out.empty() ? "" : ", ") + it->id();
    std::string minor = std::to_string(toolkit.major()) + "." + std::to_string(toolkit.minor());
    return "builds that do: " + out + (refs.size() > shown ? ", ... (`cvm list --available " + minor + "`)" : "");
}

} // namespace cvm::install
