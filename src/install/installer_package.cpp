#include "install/installer_package.h"
#include "install/sha256.h"

#include "spec/redist_platform.h"
#include "spec/spec.h"
#include "install/error.h"
#include "install/manifest.h"
#include "install/recognize.h"
#include "install/runfile.h"
#include "install/sevenzip_installer.h"
#include "platform/platform.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <sstream>

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& p) {
    return platform::read_file(p, std::size_t(16) << 20).value_or(std::string());
}

std::string family_platform(InstallerFamily family) {
    return family == InstallerFamily::LinuxRunfile ? "linux-x86_64" : "windows-x86_64";
}

std::string local_installer_hint(const std::string& version) {
    std::string xy = version.empty() ? "X.Y" : version.substr(0, version.rfind('.'));
    return "get the local installer (cuda_<version>_<driver>_win10.exe or _linux.run) or run "
           "`cvm install " +
           xy + "`";
}

} // namespace

std::optional<InstallerFamily> detect_installer(const fs::path& file) {
    if (is_makeself_archive(file)) return InstallerFamily::LinuxRunfile;
    if (is_windows_executable(file)) return InstallerFamily::WindowsLocal;
    if (auto name = parse_installer_name(file.filename().u8string()))
        return is_windows_platform(name->platform) ? InstallerFamily::WindowsLocal
                                                   : InstallerFamily::LinuxRunfile;
    return std::nullopt;
}

void check_installer_name(const fs::path& file, InstallerFamily family, const std::string& host) {
    const std::string display = file.filename().u8string();
    auto name = parse_installer_name(display);
    if (name && name->network)
        fail_input(display +
                   " is a network installer: it holds no toolkit and downloads it when "
                   "run; " +
                   local_installer_hint(name->version));
    std::string platform = name ? name->platform : family_platform(family);
    if (is_windows_platform(platform) != (family == InstallerFamily::WindowsLocal))
        fail_input(display + " is not the installer its name says (its contents are a " +
                   (family == InstallerFamily::WindowsLocal ? "Windows program" : "Linux runfile") +
                   "); download it again");
    if (!host.empty() && !same_machine(platform, host))
        fail_input(display + " is an installer for " + platform + "; this machine needs " + host +
                   ": get the " + host + " installer");
}

UnpackedToolkit unpack_installer(const fs::path& file, InstallerFamily family, const fs::path& work,
                                 const fs::path& root, const UnpackOptions& options) {
    const std::string display = file.filename().u8string();
    check_installer_name(file, family, options.host_platform);
    const bool linux_runfile = family == InstallerFamily::LinuxRunfile;
    auto name = parse_installer_name(display);
    EmbeddedArchive slice = linux_runfile ? find_runfile_payload(file) : find_7z_archive(file);

    ExtractOptions eo = options.extract;
    eo.select = [family, &display](const std::string& path) {
        // Runfiles before 10.1 hold installers inside the installer: nothing to read as a tree.
        if (family == InstallerFamily::LinuxRunfile && path.rfind("run_files", 0) == 0)
            fail_input(display + " is a runfile of CUDA 10.0 or older, which holds installers "
                                 "inside the installer; cvm takes runfiles of 10.1 and later");
        return installer_path_wanted(family, path);
    };
    ExtractResult extracted = extract_embedded_archive(file, slice, work, eo);

    // The version: from the payload's version file, else from the name; both must agree.
    std::string stated;
    nlohmann::json manifest_json;
    for (const char* v :
         {"builds/version.json", "version.json", "builds/cuda-toolkit/version.txt"}) {
        std::error_code ec;
        if (!fs::is_regular_file(work / v, ec)) continue;
        std::string text = read_text(work / v);
        stated = installer_toolkit_version(text);
        if (std::string(v).find(".json") != std::string::npos) {
            manifest_json = nlohmann::json::parse(text, nullptr, false);
            if (manifest_json.is_discarded() || !manifest_json.is_object()) manifest_json = {};
        }
        if (!stated.empty()) break;
    }
    std::string named = name ? name->version : "";
    if (!stated.empty() && !named.empty() && stated != named)
        fail_input(display + " holds CUDA " + stated + ", not " + named +
                   " as its name says; download it again");
    if (!stated.empty() && !options.expected_version.empty() && stated != options.expected_version)
        fail_input(display + " holds CUDA " + stated + ", not " + options.expected_version +
                   "; download it again");
    std::string version = !stated.empty()  ? stated
                          : !named.empty() ? named
                                           : options.expected_version;
    auto id = parse_toolkit_id(version);
    if (!id)
        fail_input(display + ": cannot tell which CUDA release it holds (no version file inside "
                             "and no cuda_X.Y.Z_... file name); rename it as NVIDIA names it");
    if (id->parts[0] < 10 || (id->parts[0] == 10 && id->parts[1] < 1))
        fail_input(display + " is CUDA " + version + "; cvm takes installers of 10.1 and later");
    if (!linux_runfile && id->parts[0] < 11)
        fail_input(display + " is CUDA " + version +
                   "; cvm takes Windows installers of 11.0 and "
                   "later (earlier ones are laid out otherwise)");

    // What the payload holds, per component.
    std::map<std::string, std::vector<const ExtractedEntry*>> by_component;
    std::map<const ExtractedEntry*, std::string> placed_at;
    for (const auto& e : extracted.entries) {
        if (e.type == ExtractedEntry::Type::Directory) continue;
        auto placed = place_installer_path(family, e.path, e.type == ExtractedEntry::Type::Symlink);
        if (!placed) continue;
        by_component[placed->component].push_back(&e);
        placed_at[&e] = placed->path;
    }
    UnpackedToolkit out;
    out.version = version;
    out.platform = name ? name->platform : family_platform(family);
    const bool merged = by_component.count("cuda-toolkit") != 0;
    std::vector<std::string> keys;
    if (merged) {
        for (const auto& c : options.components)
            if (c != "default")
                fail_input("--components: " + display + " holds CUDA " + version +
                           " as one merged tree; components can be chosen from 11.0 on");
        keys.push_back("cuda-toolkit");
    } else {
        // The installer's components, offered as a manifest would offer them.
        Manifest m;
        for (const auto& [key, entries] : by_component) {
            (void)entries;
            ManifestComponent c;
            c.key = key;
            c.name = key;
            if (manifest_json.contains(key) && manifest_json[key].is_object()) {
                const auto& j = manifest_json[key];
                if (j.contains("name") && j["name"].is_string()) c.name = j["name"];
                if (j.contains("version") && j["version"].is_string()) c.version = j["version"];
            }
            c.platforms[options.host_platform.empty() ? out.platform : options.host_platform][""] =
                Artifact{};
            m.components[key] = c;
        }
        const std::string platform =
            options.host_platform.empty() ? out.platform : options.host_platform;
        try {
            keys = resolve_components(m, platform, options.components);
        } catch (const InstallError& e) {
            fail_input(display + ": " + e.what());
        }
        if (keys.empty())
            fail_input(display + " holds none of the toolkit's components (compiler, runtime, "
                                 "headers, math libraries); download it again");
        for (const auto& k : keys) {
            const ManifestComponent* c = m.find(k);
            out.component_versions[k] = {c->name, c->version.empty() ? version : c->version};
        }
        out.components = keys;
    }

    // Move each chosen file into place; a component's own top-level files are its licenses.
    std::set<std::string> taken;
    for (const auto& key : keys) {
        for (const ExtractedEntry* e : by_component[key]) {
            std::string rel = placed_at[e];
            if (!merged && rel.find('/') == std::string::npos) rel = "licenses/" + key + "/" + rel;
            fs::path target = root / fs::u8path(rel);
            std::error_code ec;
            if (taken.count(rel) || fs::exists(fs::symlink_status(target, ec))) {
                out.conflicts.push_back(rel);
                continue;
            }
            fs::create_directories(target.parent_path());
            fs::rename(work / fs::u8path(e->path), target, ec);
            if (ec)
                fail_operation("cannot move " + e->path +
                               " into the staging folder: " + ec.message());
            taken.insert(rel);
            InstalledFile f;
            f.path = rel;
            if (e->type == ExtractedEntry::Type::Symlink) {
                if (e->link_target.find_first_of("\t\n") != std::string::npos) continue;
                f.type = InstalledFile::Type::Symlink;
                f.target = e->link_target;
            } else {
                f.size = e->size;
                f.sha256 = e->sha256;
            }
            out.files.push_back(std::move(f));
        }
    }
    if (out.files.empty())
        fail_input(display + " holds no files of the chosen components; download it again");
    return out;
}

std::string md5_listed_for(const std::string& md5sum_text, const std::string& name) {
    std::istringstream in(md5sum_text);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        std::string word, md5;
        bool named = false;
        while (words >> word) {
            if (!word.empty() && word.front() == '*') word.erase(0, 1); // md5sum's binary mark
            if (is_hex_digest(word, 32)) md5 = word;
            else if (word == name) named = true;
        }
        if (named && !md5.empty()) return md5;
    }
    return {};
}

} // namespace cvm::install
