#include "compat/cudnn_files.h"

#include "compat/elf_version_symbol.h"
#include "doctor/cuda_libraries.h"
#include "doctor/file_system_view.h"

#include <algorithm>
#include <cstring>
#include <system_error>

#include "platform/platform.h"

namespace cvm::compat {

namespace fs = std::filesystem;

namespace {

std::optional<Version> version_from_so_name(const std::string& name) {
    size_t at = name.find(".so.");
    if (at == std::string::npos) return std::nullopt;
    auto v = parse_version(name.substr(at + 4), 3, 4);
    return v;
}

// A wheel's RECORD naming the file: site-packages/<dist>-<version>.dist-info/RECORD holds
// "nvidia/cudnn/lib/libcudnn_ops.so.9,sha256=...,size".
std::optional<std::pair<std::string, Version>> wheel_owner(const fs::path& real) {
    for (fs::path dir = real.parent_path(); dir.has_relative_path(); dir = dir.parent_path()) {
        std::string name = dir.filename().u8string();
        if (name != "site-packages" && name != "dist-packages") continue;
        std::string relative = real.lexically_relative(dir).generic_u8string();
        for (const auto& entry : platform::folder_names(dir.u8string())) {
            const std::string suffix = ".dist-info";
            if (entry.size() <= suffix.size() || entry.compare(entry.size() - suffix.size(), suffix.size(), suffix) != 0)
                continue;
            if (entry.find("cudnn") == std::string::npos && entry.find("torch") == std::string::npos &&
                entry.find("tensorflow") == std::string::npos)
                continue;
            auto record = platform::read_file(dir / entry / "RECORD", std::size_t(16) << 20);
            if (!record || record->find(relative + ",") == std::string::npos) continue;
            std::string stem = entry.substr(0, entry.size() - suffix.size());
            size_t dash = stem.rfind('-');
            if (dash == std::string::npos) continue;
            std::string vtext = stem.substr(dash + 1);
            // "2.5.1+cu121": the public part only.
            vtext = vtext.substr(0, vtext.find_first_of("+-"));
            if (auto v = parse_version(vtext, 2, 4)) return std::pair{stem.substr(0, dash), *v};
        }
        break;
    }
    return std::nullopt;
}

// dpkg's package owning the file (info/<pkg>[:arch].list) and its version from status.
std::optional<std::pair<std::string, Version>> dpkg_owner(const fs::path& real, const std::string& given,
                                                          const fs::path& dpkg_dir) {
    std::string want_real = real.u8string(), want_given = given;
    auto lines_hold = [&](const std::string& text) {
        auto holds = [&](const std::string& p) {
            size_t at = text.find(p);
            while (at != std::string::npos) {
                bool start = at == 0 || text[at - 1] == '\n';
                bool end = at + p.size() == text.size() || text[at + p.size()] == '\n';
                if (start && end) return true;
                at = text.find(p, at + 1);
            }
            return false;
        };
        return holds(want_real) || holds(want_given);
    };
    fs::path info = dpkg_dir / "info";
    for (const auto& entry : platform::folder_names(info.u8string())) {
        if (entry.size() < 5 || entry.compare(entry.size() - 5, 5, ".list") != 0) continue;
        if (entry.find("cudnn") == std::string::npos) continue;
        auto text = platform::read_file(info / entry, std::size_t(8) << 20);
        if (!text || !lines_hold(*text)) continue;
        std::string package = entry.substr(0, entry.size() - 5);
        package = package.substr(0, package.find(':'));
        auto status = platform::read_file(dpkg_dir / "status", std::size_t(64) << 20);
        if (!status) return std::nullopt;
        size_t at = status->find("Package: " + package + "\n");
        if (at == std::string::npos) return std::nullopt;
        size_t end = status->find("\n\n", at);
        std::string stanza = status->substr(at, end == std::string::npos ? std::string::npos : end - at);
        size_t vat = stanza.find("\nVersion: ");
        if (vat == std::string::npos) return std::nullopt;
        std::string vtext = stanza.substr(vat + 10, stanza.find('\n', vat + 10) - vat - 10);
        // "9.14.0.64-1": the upstream part.
        vtext = vtext.substr(vtext.find(':') == std::string::npos ? 0 : vtext.find(':') + 1);
        vtext = vtext.substr(0, vtext.find_first_of("-~+"));
        if (auto v = parse_version(vtext, 2, 4)) return std::pair{package, *v};
        return std::nullopt;
    }
    return std::nullopt;
}

std::optional<Version> header_beside(const fs::path& folder) {
    for (const char* rel : {"../include/cudnn_version.h", "../../include/cudnn_version.h", "../include/cudnn.h"}) {
        auto text = platform::read_file(folder / rel, 1 << 20);
        if (!text) continue;
        auto number = [&](const std::string& macro) -> std::optional<unsigned> {
            size_t at = text->find("#define " + macro + " ");
            if (at == std::string::npos) return std::nullopt;
            try {
                return static_cast<unsigned>(std::stoul(text->substr(at + 9 + macro.size(), 12)));
            } catch (const std::exception&) {
                return std::nullopt;
            }
        };
        auto ma = number("CUDNN_MAJOR"), mi = number("CUDNN_MINOR"), pa = number("CUDNN_PATCHLEVEL");
        if (ma && mi && pa) return Version{{*ma, *mi, *pa}};
    }
    return std::nullopt;
}

} // namespace

CudnnFileVersion cudnn_file_version(const std::string& path, const CudnnEvidenceRoots& roots) {
    CudnnFileVersion f;
    f.path = path;
    std::error_code ec;
    fs::path real = fs::canonical(fs::u8path(path), ec);
    if (ec) real = fs::u8path(path);
    f.real_path = real.u8string();
    f.folder = real.parent_path().u8string();
    if (auto sym = read_cudnn_version_symbol_file(f.real_path)) {
        f.version = Version{{sym->version[0], sym->version[1], sym->version[2]}};
        f.evidence = "symbol " + sym->name;
        return f;
    }
    if (auto wheel = wheel_owner(real)) {
        f.version = wheel->second;
        f.evidence = "wheel " + wheel->first;
        return f;
    }
    if (auto deb = dpkg_owner(real, path, roots.dpkg_dir)) {
        f.version = deb->second;
        f.evidence = "dpkg " + deb->first;
        return f;
    }
    if (auto dll = doctor::dll_file_version(f.real_path, doctor::RealFileSystem())) {
        f.version = Version{{dll->parts[0], dll->parts[1], dll->parts[2], dll->parts[3]}};
        f.evidence = "DLL version";
        return f;
    }
    if (auto v = version_from_so_name(real.filename().u8string())) {
        f.version = *v;
        f.evidence = "file name";
        return f;
    }
    if (auto v = header_beside(real.parent_path())) {
        f.version = *v;
        f.evidence = "cudnn_version.h of its folder";
    }
    return f;
}

std::string CudnnSetCheck::listing() const {
    std::string out;
    for (const auto& f : files) {
        if (!out.empty()) out += "; ";
        out += fs::u8path(f.path).filename().u8string() + " " +
               (f.version ? f.version->str() + " (" + f.evidence + ")" : std::string("version unknown")) + " in " +
               f.folder;
    }
    return out;
}

CudnnSetCheck check_cudnn_set(const std::vector<std::string>& paths, const CudnnEvidenceRoots& roots) {
    CudnnSetCheck c;
    for (const auto& p : paths)
        if (platform::exists(p)) c.files.push_back(cudnn_file_version(p, roots));
    // Compared by major.minor.patch: a wheel's 4th number (build) is not in the symbols.
    std::optional<Version> first;
    for (const auto& f : c.files) {
        if (f.folder != c.files.front().folder) c.mixed_folders = true;
        if (!f.version) continue;
        Version three{{f.version->major(), f.version->minor(), f.version->parts.size() > 2 ? f.version->parts[2] : 0}};
        if (!first) first = three;
        else if (three != *first) c.mixed_versions = true;
    }
    return c;
}

} // namespace cvm::compat
