#include "compat/cudnn_files.h"

#include "binary/elf_version_symbol.h"
#include "doctor/cuda_libraries.h"
#include "doctor/file_system_view.h"

#include <algorithm>
#include <cstring>
#include <map>
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

std::optional<Version> header_beside(const fs::path& folder) {
    for (const char* rel :
         {"../include/cudnn_version.h", "../../include/cudnn_version.h", "../include/cudnn.h"}) {
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
        auto ma = number("CUDNN_MAJOR"), mi = number("CUDNN_MINOR"),
             pa = number("CUDNN_PATCHLEVEL");
        if (ma && mi && pa) return Version{{*ma, *mi, *pa}};
    }
    return std::nullopt;
}

Version release_part(const Version& v) {
    return Version{{v.major(), v.minor(), v.parts.size() > 2 ? v.parts[2] : 0}};
}

} // namespace

bool CudnnFileVersion::is_main() const {
    std::string name = fs::u8path(path).filename().u8string();
    return name.rfind("libcudnn.so", 0) == 0 || name.rfind("cudnn64_", 0) == 0;
}

CudnnFileVersion cudnn_file_version(const std::string& path, const CudnnEvidenceRoots& roots,
                                    bool with_owner) {
    CudnnFileVersion f;
    f.path = path;
    std::error_code ec;
    fs::path real = fs::canonical(fs::u8path(path), ec);
    if (ec) real = fs::u8path(path);
    f.real_path = real.u8string();
    f.folder = real.parent_path().u8string();
    auto find_owner = [&] {
        OwnerLookup found = owner_of(real, path, roots);
        f.owner = found.owner;
        f.replaced = found.replaced;
        if (!f.owner) f.owner = copied_from(real, roots);
    };
    if (auto sym = binary::read_cudnn_version_symbol_file(f.real_path)) {
        f.version = Version{{sym->version[0], sym->version[1], sym->version[2]}};
        f.evidence = "symbol " + sym->name;
        if (with_owner) find_owner();
        return f;
    }
    find_owner();
    if (f.owner && f.owner->version) {
        f.version = f.owner->version;
        f.evidence = f.owner->describe();
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
    // A file its owner did not install says nothing of its folder's release.
    if (f.replaced) return f;
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
               (f.version ? f.version->str() + " (" + f.evidence + ")"
                          : std::string("version unknown"));
        if (f.replaced)
            out += ", not the file " + f.replaced->describe() + " " + f.replaced->version_text +
                   " installed";
        out += " in " + f.folder;
    }
    return out;
}

std::string CudnnSetCheck::fix() const {
    // One step per owner and action, naming its files: "BEFORE name1, name2 AFTER".
    struct Step {
        std::string before, after;
        std::vector<std::string> names;
    };
    std::vector<Step> steps;
    auto add = [&](const std::string& before, const std::string& name, const std::string& after) {
        for (auto& s : steps)
            if (s.before == before && s.after == after) return s.names.push_back(name);
        steps.push_back({before, after, {name}});
    };
    const std::string want = release ? "cuDNN " + release->str() : std::string("one release");
    const CudnnFileVersion* main_file = nullptr;
    for (const auto& f : files)
        if (f.is_main() && !main_file) main_file = &f;
    if (!main_file && !files.empty()) main_file = &files.front();
    // Where the set's release can be had again: the owner of the main library.
    std::string source;
    if (main_file && main_file->owner && main_file->version && release &&
        release_part(*main_file->version) == *release)
        source = " from " + fs::u8path(main_file->owner->owned_path).parent_path().u8string() +
                 " (" + main_file->owner->who() + ")";
    for (const auto& f : files) {
        const std::string name = fs::u8path(f.path).filename().u8string();
        const bool odd = f.version && release && release_part(*f.version) != *release;
        const bool elsewhere = main_file && f.folder != main_file->folder;
        if (f.replaced) {
            // The owner's own file was overwritten: put it back.
            add("`" + f.replaced->reinstall() + "` restores ", name, "");
            continue;
        }
        if (!odd && !(mixed_folders && !mixed_versions && elsewhere)) continue;
        if (f.owner && f.owner->copy)
            add("replace the copies of " + f.owner->who() + " " + f.owner->version_text +
                    "'s files in " + f.folder + " (",
                name, ") with " + want + "'s" + source);
        else if (f.owner && f.owner->kind == FileOwner::Kind::Dpkg)
            add("upgrade the package " + f.owner->name + " (" + f.owner->version_text + ": ", name,
                ") to " + want + " or remove it (`apt-get remove " + f.owner->name + "`)");
        else if (f.owner && f.owner->kind == FileOwner::Kind::Wheel)
            add("install the wheel " + f.owner->installable_name() + " of " + want +
                    " or remove it (`pip uninstall " + f.owner->installable_name() + "`; " +
                    f.owner->version_text + " holds ",
                name, ")");
        else if (f.owner)
            add("select the cvm entry of " + want + " instead of " + f.owner->name + " (", name,
                ")");
        else
            add("replace ", name, " in " + f.folder + " with " + want + "'s" + source);
    }
    std::string text;
    for (const auto& s : steps) {
        text += (text.empty() ? "" : "; ") + s.before;
        for (size_t i = 0; i < s.names.size(); ++i)
            text += (i ? ", " : "") + s.names[i];
        text += s.after;
    }
    return text + (text.empty() ? "select" : ", or select") +
           " one complete cuDNN with `cvm use CUDA+CUDNN`";
}

CudnnSetCheck check_cudnn_set(const std::vector<std::string>& paths,
                              const CudnnEvidenceRoots& roots) {
    CudnnSetCheck c;
    for (const auto& p : paths)
        if (platform::exists(p)) c.files.push_back(cudnn_file_version(p, roots));
    // Compared by major.minor.patch: a wheel's 4th number (build) is not in the symbols.
    std::map<std::string, int> votes;
    std::optional<Version> first;
    for (const auto& f : c.files) {
        if (f.folder != c.files.front().folder) c.mixed_folders = true;
        if (f.replaced) c.altered = true;
        if (!f.version) continue;
        Version three = release_part(*f.version);
        if (f.is_main() && !c.release) c.release = three;
        ++votes[three.str()];
        if (!first)
            first = three;
        else if (three != *first)
            c.mixed_versions = true;
    }
    if (!c.release && !votes.empty()) {
        auto best = std::max_element(votes.begin(), votes.end(), [](const auto& a, const auto& b) {
            return a.second < b.second;
        });
        c.release = parse_version(best->first, 3, 3);
    }
    // The odd files' owners are named in the fix, even those whose version symbol answered.
    if (c.problem())
        for (auto& f : c.files)
            if (!f.owner && !f.replaced && f.evidence.rfind("symbol ", 0) == 0 && c.release &&
                f.version && release_part(*f.version) != *c.release)
                f = cudnn_file_version(f.path, roots, true);
    return c;
}

} // namespace cvm::compat
