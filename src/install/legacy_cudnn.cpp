#include "install/legacy_cudnn.h"

#include "spec/redist_platform.h"
#include "text/toml_input.h"
#include "install/error.h"
#include "install/sha256.h"
#include "registry/registry.h"

#include <algorithm>
#include <cctype>

namespace cvm::registry {
extern const unsigned char embedded_cudnn_archives_toml[];
extern const std::size_t embedded_cudnn_archives_toml_size;
} // namespace cvm::registry

namespace cvm::install {

namespace {

struct TableError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::string variant_list(const registry::CudnnRelease& rel) {
    std::string out;
    for (const auto& b : rel.builds)
        out += (out.empty() ? "" : ", ") + b.cuda.str();
    return out;
}

} // namespace

std::map<std::string, KnownArchiveSum> parse_known_archive_sums(const std::string& text,
                                                                const std::string& origin) {
    const std::string advice = "; fix it or reinstall cvm";
    std::map<std::string, KnownArchiveSum> out;
    try {
        toml::table doc = parse_toml<TableError>(text, origin, advice);
        const toml::array* rows = doc["archive"].as_array();
        if (rows == nullptr) return out;
        for (const auto& row : *rows) {
            const toml::table* t = row.as_table();
            auto line = std::to_string(row.source().begin.line);
            auto bad = [&](const std::string& what) {
                return TableError(origin + ":" + line + ": " + what + advice);
            };
            if (t == nullptr) throw bad("archive: expected a table");
            auto name = (*t)["name"].value<std::string>();
            auto sha = (*t)["sha256"].value<std::string>();
            if (!name || name->empty()) throw bad("archive: name missing");
            if (!sha || !is_sha256_hex(*sha) ||
                std::any_of(sha->begin(), sha->end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)); }))
                throw bad(*name + ": sha256 must be 64 lower-case hex digits");
            KnownArchiveSum s;
            s.sha256 = *sha;
            if (auto size = (*t)["size"].value<std::int64_t>()) {
                if (*size <= 0) throw bad(*name + ": size must be positive");
                s.size = static_cast<std::uint64_t>(*size);
            }
            s.source = (*t)["source"].value_or(std::string());
            if (!out.emplace(*name, s).second) throw bad(*name + ": listed twice");
        }
    } catch (const TableError& e) {
        fail_operation(e.what(), "registry");
    }
    return out;
}

std::map<std::string, KnownArchiveSum> load_known_archive_sums() {
    std::pair<std::string, std::string> text;
    try {
        text = registry::registry_table_text(
            "cudnn_archives.toml",
            {reinterpret_cast<const char*>(registry::embedded_cudnn_archives_toml),
             registry::embedded_cudnn_archives_toml_size});
    } catch (const registry::RegistryError&) {
        return {}; // no table: every legacy archive is trusted on first use
    }
    return parse_known_archive_sums(text.first, text.second);
}

std::string legacy_archive_path(const std::string& version, const std::string& name) {
    std::string folder = "redist/cudnn/v" + version.substr(0, version.rfind('.')) + "/";
    // cudnn-linux-x86_64-8.3.3.40_cuda11.5-archive.tar.xz: local_installers/11.5/
    auto at = name.find("_cuda");
    auto end = name.find("-archive");
    if (at != std::string::npos && end != std::string::npos && end > at + 5)
        folder += "local_installers/" + name.substr(at + 5, end - at - 5) + "/";
    return folder + name;
}

LegacyArchive choose_legacy_archive(const registry::CudnnRelease& rel, const std::string& cuda,
                                    const std::string& host) {
    const std::string version = rel.version.str();
    const registry::CudnnBuild* chosen = nullptr;
    if (cuda.empty()) {
        if (rel.builds.size() != 1)
            fail_input("cuDNN " + version + " has builds for CUDA " + variant_list(rel) +
                           "; say which with --cuda, e.g. `cvm install cudnn " + version +
                           " --cuda " + rel.builds.back().cuda.str() + "`",
                       "not_found");
        chosen = &rel.builds.front();
    } else {
        auto wanted = parse_version(cuda, 1, 2);
        if (!wanted) fail_input("--cuda " + printable(cuda) + " is not a CUDA version like 11.2");
        for (const auto& b : rel.builds)
            if (registry::cudnn_build_is_for(b, *wanted)) chosen = &b; // builds are oldest first
        if (chosen == nullptr)
            fail_input("cuDNN " + version + " has no build for CUDA " + wanted->str() +
                           " (its builds are for CUDA " + variant_list(rel) + "); see `cvm list --available cudnn " +
                           version + "`",
                       "not_found");
    }
    bool windows = is_windows_platform(host);
    if (host != "linux-x86_64" && host != "windows-x86_64")
        fail_input("cuDNN " + version + " predates NVIDIA's manifests, and its public archives are "
                   "for linux-x86_64 and windows-x86_64 only, not " + host + "; pick a cuDNN from 8.4 on",
                   "not_installable");
    const auto& names = windows ? chosen->windows_archives : chosen->linux_archives;
    if (names.empty())
        fail_input("cvm's registry names no " + std::string(windows ? "Windows" : "Linux") +
                       " archive of cuDNN " + version + " for CUDA " + chosen->cuda.str() +
                       "; download it from NVIDIA and run `cvm install FILE`",
                   "not_installable");
    // Several names (windows10 / windows7 builds of cuDNN 7): the first is the current system's.
    return {chosen, names.front(), legacy_archive_path(version, names.front())};
}

} // namespace cvm::install
