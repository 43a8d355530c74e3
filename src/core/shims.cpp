#include "core/shims.h"

#include <algorithm>
#include <set>
#include <system_error>

#include "core/environment.h"
#include "platform/platform.h"

namespace cvm {

fs::path companion_program(const std::string& name) {
    fs::path exe_dir = platform::current_exe().parent_path();
    std::string file = name + platform::exe_suffix();
    std::error_code ec;
    if (fs::exists(exe_dir / file, ec)) return exe_dir / file;
    return exe_dir.parent_path() / "libexec" / "cvm" / file;
}

fs::path shim_binary() {
    if (auto v = platform::get_env("CVM_SHIM_BINARY"); v && !v->empty()) return fs::u8path(*v);
    return companion_program("cvm-shim");
}

fs::path find_system_tool(const std::string& tool, const std::string& path_list,
                          const fs::path& shims_dir, const fs::path& self) {
    for (const auto& dir : split_path_list(path_list, platform::host_os())) {
        if (dir.empty()) continue;
        std::error_code ec;
        if (fs::equivalent(fs::u8path(dir), shims_dir, ec)) continue;
        fs::path candidate = platform::find_executable(tool, dir);
        if (candidate.empty() || (!self.empty() && fs::equivalent(candidate, self, ec))) continue;
        return candidate;
    }
    return {};
}

std::vector<std::string> toolkit_tools(const Store& store) {
    std::set<std::string> tools;
    for (const Entry& e : store.list(Kind::Cuda)) {
        for (const auto& b : e.bin_dirs) {
            std::error_code ec;
            for (fs::directory_iterator it(e.path / fs::u8path(b), ec), end; !ec && it != end;
                 it.increment(ec)) {
                if (!platform::is_executable(it->path())) continue;
                std::string name = it->path().filename().u8string();
                if (name.empty() || name[0] == '.' || name[0] == '_') continue;
                if (platform::host_os() == platform::Os::Windows) {
                    // Only .exe files get a shim; .bat/.cmd cannot be started directly.
                    std::string lower = name;
                    std::transform(lower.begin(), lower.end(), lower.begin(),
                                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
                    if (lower.size() < 4 || lower.compare(lower.size() - 4, 4, ".exe") != 0) continue;
                    name = lower;
                }
                tools.insert(name);
            }
        }
    }
    return {tools.begin(), tools.end()};
}

RehashResult rehash(const Store& store, const fs::path& shim) {
    RehashResult r;
    fs::path dir = store.shims_dir();
    fs::create_directories(dir);
    auto tools = toolkit_tools(store);
    std::set<std::string> wanted(tools.begin(), tools.end());
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().u8string();
        if (!wanted.count(name)) {
            std::error_code e2;
            fs::remove(it->path(), e2);
            if (!e2) ++r.removed;
        }
    }
    for (const auto& tool : tools) {
        fs::path link = dir / fs::u8path(tool);
        std::error_code e2;
        if (fs::is_symlink(link, e2)) {
            if (fs::read_symlink(link, e2) == shim) continue;
            fs::remove(link, e2);
        } else if (fs::exists(link, e2)) {
            // A copy or hard link: refresh it when the launcher changed.
            if (fs::equivalent(link, shim, e2) ||
                (fs::file_size(link, e2) == fs::file_size(shim, e2) &&
                 fs::last_write_time(link, e2) >= fs::last_write_time(shim, e2)))
                continue;
            fs::remove(link, e2);
        }
        // Stage beside, then rename, so a running shell never sees a missing shim.
        fs::path tmp = dir / fs::u8path("." + tool + ".tmp" + std::to_string(platform::process_id()));
        fs::remove(tmp, e2);
        fs::create_symlink(shim, tmp, e2);
        if (e2) {
            e2.clear();
            fs::create_hard_link(shim, tmp, e2);
        }
        if (e2) {
            e2.clear();
            fs::copy_file(shim, tmp, fs::copy_options::overwrite_existing, e2);
        }
        if (e2) throw std::runtime_error("cannot create shim " + link.u8string() + ": " + e2.message());
        fs::rename(tmp, link, e2);
        if (e2) throw std::runtime_error("cannot create shim " + link.u8string() + ": " + e2.message());
        ++r.created;
    }
    r.total = tools.size();
    return r;
}

} // namespace cvm
