#include "registry/nccl.h"

#include "text/toml_input.h"
#include "registry/registry.h"

#include <algorithm>
#include <cctype>

namespace cvm::registry {
extern const unsigned char embedded_nccl_toml[];
extern const std::size_t embedded_nccl_toml_size;

namespace {

bool lower_hex64(const std::string& s) {
    return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

} // namespace

const NcclArchive* NcclBuild::archive_for(std::string_view platform) const {
    const NcclArchive& a = platform == "linux-x86_64" ? linux_x86_64 : linux_sbsa;
    if (platform != "linux-x86_64" && platform != "linux-sbsa" && platform != "linux-aarch64")
        return nullptr;
    return a.name.empty() ? nullptr : &a;
}

std::vector<NcclRelease> parse_nccl_releases(const std::string& text, const std::string& origin) {
    const std::string advice = "; fix it or reinstall cvm";
    toml::table doc = parse_toml<RegistryError>(text, origin, advice);
    std::vector<NcclRelease> out;
    const toml::array* rows = doc["release"].as_array();
    if (rows == nullptr) return out;
    for (const auto& row : *rows) {
        auto where = [&](const toml::node& n) {
            return origin + ":" + std::to_string(n.source().begin.line) + ": ";
        };
        const toml::table* t = row.as_table();
        if (t == nullptr) throw RegistryError(where(row) + "release: expected a table" + advice);
        NcclRelease r;
        auto version = parse_version((*t)["version"].value_or(std::string()), 3, 3);
        if (!version) throw RegistryError(where(row) + "release: version must be X.Y.Z" + advice);
        r.version = *version;
        r.folder = (*t)["folder"].value_or("v" + r.version.str());
        if (r.folder.empty() || r.folder.find_first_of("/\\") != std::string::npos ||
            r.folder.find("..") != std::string::npos)
            throw RegistryError(where(row) + r.version.str() + ": folder must be one folder name" +
                                advice);
        r.source = (*t)["source"].value_or(std::string());
        const toml::array* builds = (*t)["build"].as_array();
        if (builds == nullptr || builds->empty())
            throw RegistryError(where(row) + r.version.str() + ": no [[release.build]]" + advice);
        for (const auto& b : *builds) {
            const toml::table* bt = b.as_table();
            if (bt == nullptr)
                throw RegistryError(where(b) + r.version.str() + ": build: expected a table" +
                                    advice);
            NcclBuild build;
            auto cuda = parse_version((*bt)["cuda"].value_or(std::string()), 2, 2);
            if (!cuda)
                throw RegistryError(where(b) + r.version.str() + ": build: cuda must be X.Y" +
                                    advice);
            build.cuda = *cuda;
            auto archive = [&](const char* key, NcclArchive& into) {
                into.name = (*bt)[key].value_or(std::string());
                into.sha256 = (*bt)[std::string(key) + "_sha256"].value_or(std::string());
                if (!into.sha256.empty() && !lower_hex64(into.sha256))
                    throw RegistryError(where(b) + into.name +
                                        ": sha256 must be 64 lower-case hex digits" + advice);
                if (!into.sha256.empty() && into.name.empty())
                    throw RegistryError(where(b) + r.version.str() + ": " + key +
                                        "_sha256 without " + key + advice);
                // The name must say this release and CUDA, as NVIDIA names them.
                const std::string want = "nccl_" + r.version.str() + "-";
                if (!into.name.empty() &&
                    (into.name.rfind(want, 0) != 0 ||
                     into.name.find("+cuda" + build.cuda.str() + "_") == std::string::npos ||
                     into.name.find_first_of("/\\") != std::string::npos))
                    throw RegistryError(where(b) + into.name + ": not NCCL " + r.version.str() +
                                        " for CUDA " + build.cuda.str() + advice);
            };
            archive("linux_x86_64", build.linux_x86_64);
            archive("linux_sbsa", build.linux_sbsa);
            build.sha256_source = (*bt)["sha256_source"].value_or(std::string());
            if ((!build.linux_x86_64.sha256.empty() || !build.linux_sbsa.sha256.empty()) &&
                build.sha256_source.empty())
                throw RegistryError(where(b) + r.version.str() +
                                    ": a sha256 without sha256_source" + advice);
            r.builds.push_back(std::move(build));
        }
        std::sort(r.builds.begin(), r.builds.end(),
                  [](const NcclBuild& a, const NcclBuild& b) { return a.cuda < b.cuda; });
        out.push_back(std::move(r));
    }
    std::sort(out.begin(), out.end(),
              [](const NcclRelease& a, const NcclRelease& b) { return a.version < b.version; });
    for (size_t i = 1; i < out.size(); ++i)
        if (out[i].version == out[i - 1].version)
            throw RegistryError(origin + ": NCCL " + out[i].version.str() + " is listed twice" +
                                advice);
    return out;
}

std::vector<NcclRelease> load_nccl_releases() {
    auto [text, origin] = registry_table_text(
        "nccl.toml", {reinterpret_cast<const char*>(embedded_nccl_toml), embedded_nccl_toml_size});
    return parse_nccl_releases(text, origin);
}

const NcclRelease* find_nccl_release(const std::vector<NcclRelease>& releases,
                                     const Version& prefix) {
    const NcclRelease* best = nullptr;
    for (const auto& r : releases)
        if (r.version.has_prefix(prefix)) best = &r; // oldest first: the last is the newest
    return best;
}

const NcclBuild* choose_nccl_build(const NcclRelease& release, const std::optional<Version>& cuda) {
    const NcclBuild* best = nullptr;
    for (const auto& b : release.builds) {
        if (cuda && (b.cuda.major() != cuda->major() ||
                     (cuda->parts.size() > 1 && b.cuda.minor() != cuda->minor())))
            continue;
        best = &b; // oldest CUDA first: the last is the newest
    }
    return best;
}

std::string conventional_nccl_archive(const Version& version, const Version& cuda,
                                      std::string_view platform) {
    std::string arch = platform == "linux-x86_64"    ? "x86_64"
                       : platform == "linux-ppc64le" ? "ppc64le"
                                                     : "aarch64";
    return "nccl_" + version.str() + "-1+cuda" + cuda.str() + "_" + arch + ".txz";
}

} // namespace cvm::registry
