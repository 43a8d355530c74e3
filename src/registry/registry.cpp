// Lookups over a loaded Registry. Pure functions: no I/O.
#include <algorithm>
#include <cctype>

#include "text/ascii.h"
#include "spec/redist_platform.h"
#include "registry/registry.h"

namespace cvm::registry {

namespace {

bool contains(const std::vector<std::string>& list, std::string_view key) {
    return std::find(list.begin(), list.end(), key) != list.end();
}

Version major_minor(const Version& v) {
    Version out;
    out.parts.push_back(v.major());
    out.parts.push_back(v.minor());
    return out;
}


const std::optional<DriverVersion>& driver_of(const CudaRelease& r, Platform p) {
    return p == Platform::Linux ? r.driver_linux : r.driver_windows;
}

} // namespace

const char* platform_name(Platform p) {
    return p == Platform::Linux ? "linux" : "windows";
}

bool CudaRelease::is_inferred(std::string_view key) const {
    return contains(inferred, key);
}
bool CudnnRelease::is_inferred(std::string_view key) const {
    return contains(inferred, key);
}

std::optional<DriverVersion> parse_driver_version(std::string_view text) {
    auto v = parse_version(text, 2, 4);
    if (!v) return std::nullopt;
    return DriverVersion{std::string(text), *v};
}

// ---- CUDA ----

std::vector<const CudaRelease*> find_cuda_releases(const Registry& reg, const Version& prefix) {
    std::vector<const CudaRelease*> out;
    for (const auto& r : reg.cuda)
        if (r.version.has_prefix(prefix)) out.push_back(&r);
    return out;
}

const CudaRelease* find_cuda_release(const Registry& reg, const Version& prefix) {
    auto all = find_cuda_releases(reg, prefix);
    return all.empty() ? nullptr : all.back();
}

std::vector<const CudaRelease*> find_cuda_by_components(const Registry& reg,
                                                        const std::optional<Version>& cudart,
                                                        const std::optional<Version>& nvcc) {
    std::vector<const CudaRelease*> out;
    if (!cudart && !nvcc) return out;
    for (const auto& r : reg.cuda) {
        if (cudart && (!r.cudart || *r.cudart != *cudart)) continue;
        if (nvcc && (!r.nvcc || *r.nvcc != *nvcc)) continue;
        out.push_back(&r);
    }
    return out;
}

std::optional<NvccBuildNumber> nvcc_build_number(const Registry* reg, const Version& v) {
    if (v.parts.size() != 3) return std::nullopt;
    const Version minor{{v.major(), v.minor()}};
    NvccBuildNumber out;
    if (reg) {
        if (!find_cuda_releases(*reg, v).empty()) return std::nullopt;
        auto owners = find_cuda_by_components(*reg, std::nullopt, v);
        if (!owners.empty()) {
            // The minor alone when its newest release is the one (`cvm install 11.8`), else in full.
            const CudaRelease* newest = find_cuda_release(*reg, minor);
            out.release = newest && newest->nvcc && *newest->nvcc == v ? minor.str() : owners.back()->version.str();
            out.known = true;
            return out;
        }
    }
    if (v.major() < 11 || v.parts[2] < kSmallestNvccBuild) return std::nullopt;
    out.release = minor.str();
    out.minor_known = reg && find_cuda_release(*reg, minor);
    if (!reg) out.minor_known = true; // nothing to update: say what to run
    return out;
}

std::string nvcc_build_line(const Version& v, const NvccBuildNumber& b, const std::string& command,
                            const std::string& rest, const std::string& outcome) {
    const std::string run = "`" + command + " " + b.release + rest + "`";
    const std::string done = outcome.empty() ? "" : "; " + outcome;
    if (b.known) return v.str() + " is nvcc's build number of CUDA " + b.release + done + "; run " + run;
    return v.str() + " looks like nvcc's build number of CUDA " + b.release + " (toolkit releases are numbered " +
           b.release + ".0, " + b.release + ".1, ...)" + done + "; run " +
           (b.minor_known ? run : "`cvm update` (cvm knows no CUDA " + b.release + " yet), then " + run);
}

std::optional<DriverRequirement> minimum_driver(const Registry& reg, const Version& cuda,
                                                Platform platform, DriverRule rule) {
    if (cuda.empty()) return std::nullopt;
    if (rule == DriverRule::MinorCompat) {
        for (const auto& mc : reg.minor_compat) {
            if (mc.major != cuda.major()) continue;
            const auto& d = platform == Platform::Linux
                                ? std::optional<DriverVersion>(mc.driver_linux)
                                : mc.driver_windows;
            if (!d) return std::nullopt;
            return DriverRequirement{*d, nullptr, false};
        }
        return std::nullopt;
    }
    const CudaRelease* target = find_cuda_release(reg, cuda);
    if (!target) return std::nullopt;
    if (const auto& d = driver_of(*target, platform)) {
        bool inferred =
            target->is_inferred(platform == Platform::Linux ? "driver_linux" : "driver_windows");
        return DriverRequirement{*d, target, inferred};
    }
    // An update without a recorded driver needs at least what the previous update of its minor
    // needed: requirements never go down within a minor.
    const Version mm = major_minor(target->version);
    for (auto it = reg.cuda.rbegin(); it != reg.cuda.rend(); ++it) {
        if (!(it->version < target->version) || !it->version.has_prefix(mm)) continue;
        if (const auto& d = driver_of(*it, platform)) return DriverRequirement{*d, &*it, true};
    }
    return std::nullopt;
}

// ---- cuDNN ----

std::vector<const CudnnRelease*> find_cudnn_releases(const Registry& reg, const Version& prefix) {
    std::vector<const CudnnRelease*> out;
    for (const auto& r : reg.cudnn)
        if (r.version.has_prefix(prefix)) out.push_back(&r);
    return out;
}

const CudnnRelease* find_cudnn_release(const Registry& reg, const Version& prefix) {
    auto all = find_cudnn_releases(reg, prefix);
    return all.empty() ? nullptr : all.back();
}

std::string CudnnBuildRef::id() const {
    if (!release || !build) return {};
    return release->version.str() + "-cuda" + build->cuda.str();
}

std::optional<CudnnBuildRef> find_cudnn_build(const Registry& reg, std::string_view id) {
    auto parsed = parse_cudnn_id(id);
    if (!parsed || parsed->version.parts.size() < 3) return std::nullopt;
    // "8.9.7-cuda12" names the release with that prefix; "8.9.7.29" must match exactly.
    for (auto it = reg.cudnn.rbegin(); it != reg.cudnn.rend(); ++it) {
        bool match = parsed->version.parts.size() == 4 ? it->version == parsed->version
                                                       : it->version.has_prefix(parsed->version);
        if (!match) continue;
        for (const auto& b : it->builds)
            if (b.cuda == parsed->cuda) return CudnnBuildRef{&*it, &b};
        return std::nullopt;
    }
    return std::nullopt;
}

std::optional<std::pair<Version, Version>> cudnn_supported_cuda(const Registry& reg,
                                                                std::string_view id) {
    auto ref = find_cudnn_build(reg, id);
    if (!ref) return std::nullopt;
    return std::make_pair(ref->build->supports_min, ref->build->supports_max);
}

bool cudnn_build_supports(const CudnnBuild& build, const Version& toolkit) {
    if (toolkit.empty()) return false;
    Version mm = major_minor(toolkit);
    return !(mm < build.supports_min) && !(build.supports_max < mm);
}

bool cudnn_build_is_for(const CudnnBuild& build, const Version& cuda) {
    if (cuda.empty() || build.cuda.empty() || build.cuda.major() != cuda.major()) return false;
    return build.cuda.parts.size() < 2 || cuda.parts.size() < 2 || build.cuda.parts[1] == cuda.parts[1];
}

const char* fetch_name(Fetch how) {
    switch (how) {
    case Fetch::Manifest: return "manifest";
    case Fetch::Archive: return "archive";
    case Fetch::Installer: return "installer";
    }
    return "manifest";
}

Fetch how_fetched(const CudaRelease& release) {
    return release.manifest.empty() ? Fetch::Installer : Fetch::Manifest;
}

Fetch how_fetched(const CudnnRelease& release) {
    return release.manifest.empty() ? Fetch::Archive : Fetch::Manifest;
}

std::vector<CudnnBuildRef> cudnn_builds_for_cuda(const Registry& reg, const Version& toolkit) {
    std::vector<CudnnBuildRef> out;
    for (const auto& r : reg.cudnn)
        for (const auto& b : r.builds)
            if (cudnn_build_supports(b, toolkit)) out.push_back(CudnnBuildRef{&r, &b});
    return out;
}

std::string cudnn_library_file(unsigned major, std::string_view sub, Platform platform) {
    const std::string m = std::to_string(major);
    if (platform == Platform::Linux)
        return sub.empty() ? "libcudnn.so." + m : "libcudnn_" + std::string(sub) + ".so." + m;
    return sub.empty() ? "cudnn64_" + m + ".dll" : "cudnn_" + std::string(sub) + "64_" + m + ".dll";
}

std::vector<std::string> cudnn_library_names(const Registry& reg, unsigned major,
                                             Platform platform) {
    std::vector<std::string> out;
    for (const auto& set : reg.cudnn_library_sets) {
        if (set.major != major) continue;
        out.push_back(cudnn_library_file(major, "", platform));
        for (const auto& sub : set.sublibraries)
            out.push_back(cudnn_library_file(major, sub, platform));
    }
    return out;
}

std::string cudnn_redist_archive_name(const CudnnBuildRef& ref, std::string_view redist_platform) {
    if (!ref.release || !ref.build) return {};
    const bool windows = is_windows_platform(redist_platform);
    return "cudnn-" + std::string(redist_platform) + "-" + ref.release->version.str() + "_cuda" +
           ref.build->cuda.str() + "-archive" + (windows ? ".zip" : ".tar.xz");
}

// ---- Frameworks ----

std::string framework_key(std::string_view name) {
    std::string n = ascii_lower(name.substr(0, name.find('[')));
    for (char& c : n)
        if (c == '_' || c == '.') c = '-';
    if (n == "torch" || n == "pytorch-gpu") return "pytorch";
    if (n == "tensorflow-gpu") return "tensorflow";
    if (n == "jaxlib") return "jax";
    return n;
}

std::vector<const FrameworkRelease*> framework_releases(const Registry& reg,
                                                        std::string_view name) {
    const std::string n = framework_key(name);
    std::vector<const FrameworkRelease*> out;
    for (const auto& f : reg.frameworks)
        if (f.name == n) out.push_back(&f);
    return out;
}

const FrameworkRelease* find_framework(const Registry& reg, std::string_view name,
                                       const Version& version) {
    const FrameworkRelease* best = nullptr;
    for (const FrameworkRelease* f : framework_releases(reg, name)) {
        // The entry "2.1" describes 2.1.0, 2.1.2, ...; a longer entry wins over a shorter one.
        if (!version.has_prefix(f->version)) continue;
        if (!best || best->version.parts.size() < f->version.parts.size()) best = f;
    }
    return best;
}

const FrameworkBuild* find_framework_build(const FrameworkRelease& release, const Version& cuda) {
    if (cuda.parts.size() < 2) return nullptr;
    Version mm = major_minor(cuda);
    for (const auto& b : release.builds)
        if (b.cuda == mm) return &b;
    return nullptr;
}

const FrameworkBuild* find_framework_build(const FrameworkRelease& release, std::string_view tag) {
    std::string t = ascii_lower(tag);
    for (const auto& b : release.builds)
        if (!b.tag.empty() && b.tag == t) return &b;
    return nullptr;
}

} // namespace cvm::registry
