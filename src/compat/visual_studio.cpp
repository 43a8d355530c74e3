#include "compat/visual_studio.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "compat/compiler_id.h"
#include "activation/environment.h"
#include "platform/platform.h"
#include "text/path_list.h"

namespace cvm::compat {

namespace fs = std::filesystem;

std::vector<fs::path> default_visual_studio_roots() {
    std::vector<fs::path> out;
    if (auto list = platform::get_env("CVM_VISUAL_STUDIO_ROOTS")) {
        for (const std::string& item : split_path_list(*list, platform::Os::Windows))
            if (!item.empty()) out.push_back(fs::u8path(item));
        return out;
    }
    for (const char* var : {"ProgramFiles", "ProgramFiles(x86)"})
        if (auto v = platform::get_env(var); v && !v->empty()) {
            fs::path root = fs::u8path(*v) / "Microsoft Visual Studio";
            if (std::find(out.begin(), out.end(), root) == out.end()) out.push_back(root);
        }
    return out;
}

fs::path default_visual_studio_instances() {
    if (auto v = platform::get_env("CVM_VISUAL_STUDIO_INSTANCES")) return fs::u8path(*v);
    if (auto v = platform::get_env("ProgramData"); v && !v->empty())
        return fs::u8path(*v) / "Microsoft" / "VisualStudio" / "Packages" / "_Instances";
    return {};
}

std::optional<fs::path> installation_path_of_state(std::string_view state_json) {
    auto doc = nlohmann::json::parse(state_json.begin(), state_json.end(), nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return std::nullopt;
    auto it = doc.find("installationPath");
    if (it == doc.end() || !it->is_string() || it->get<std::string>().empty()) return std::nullopt;
    return fs::u8path(it->get<std::string>());
}

std::vector<fs::path> visual_studio_cl_programs(const std::vector<fs::path>& roots, const fs::path& instances) {
    std::vector<fs::path> installs;
    for (const auto& root : roots)
        for (const auto& year : platform::folder_names(root.u8string()))
            for (const auto& edition : platform::folder_names((root / year).u8string()))
                installs.push_back(root / year / edition);
    if (!instances.empty())
        for (const auto& id : platform::folder_names(instances.u8string()))
            if (auto text = platform::read_file(instances / id / "state.json", 1 << 20))
                if (auto install = installation_path_of_state(*text)) installs.push_back(*install);
    std::vector<std::pair<Version, fs::path>> found;
    std::vector<platform::FileId> seen;
    for (const auto& install : installs) {
        fs::path msvc = install / "VC" / "Tools" / "MSVC";
        for (const auto& toolset : platform::folder_names(msvc.u8string())) {
            auto v = cl_version_of_toolset(toolset);
            if (!v) continue;
            fs::path cl = msvc / toolset / "bin" / "Hostx64" / "x64" / "cl.exe";
            // An install both under a root and in the Installer's records is counted once.
            auto id = platform::file_id(cl);
            if (!id || std::find(seen.begin(), seen.end(), *id) != seen.end()) continue;
            seen.push_back(*id);
            found.emplace_back(*v, cl);
        }
    }
    std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<fs::path> out;
    for (auto& f : found) out.push_back(f.second);
    return out;
}

} // namespace cvm::compat
