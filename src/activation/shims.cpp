#include "activation/shims.h"

#include <set>
#include <utility>
#include <system_error>

#include "text/ascii.h"
#include "activation/environment.h"
#include "config/trust.h"
#include "platform/platform.h"
#include "text/path_list.h"

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

const char* const kShimDepthVariable = "CVM_SHIM_DEPTH";

int shim_depth(const std::optional<std::string>& value, std::uint64_t pid) {
    if (!value) return 0;
    const std::string& v = *value;
    size_t colon = v.find(':');
    if (colon == 0 || colon == std::string::npos) return 0;
    int depth = 0;
    for (size_t i = 0; i < colon; ++i) {
        if (v[i] < '0' || v[i] > '9' || depth > 1000) return 0;
        depth = depth * 10 + (v[i] - '0');
    }
    // On Windows the shim starts the tool as a child, so pids never match; the count alone holds.
    if (platform::host_os() == platform::Os::Linux && v.compare(colon + 1, std::string::npos,
                                                                std::to_string(pid)) != 0)
        return 0;
    return depth;
}

static std::string lower_name(std::string name) {
    for (auto& c : name)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".exe") == 0) name.resize(name.size() - 4);
    return name;
}

bool is_host_program(const std::string& raw) {
    static const char* const host[] = {
        "cc",     "c++",    "cpp",     "gcc",     "g++",      "gfortran", "clang",  "cl",
        "link",   "ld",     "lld",     "gold",    "as",       "ar",       "nm",     "ranlib",
        "strip",  "objcopy", "objdump", "readelf", "make",    "cmake",    "ninja",  "sh",
        "bash",   "dash",   "zsh",     "env",     "python",   "python3",  "perl",   "ccache",
        "distcc", "icc",    "icpc",    "icx",     "icpx",     "nvc",      "nvc++",  "pgcc"};
    std::string name = lower_name(raw);
    if (name.rfind("clang", 0) == 0 || name.rfind("ld.", 0) == 0) return true;
    // gcc-12, x86_64-linux-gnu-g++-12: drop a version suffix, then a target triplet prefix.
    size_t dash = name.find_last_of('-');
    if (dash != std::string::npos && dash + 1 < name.size() &&
        name.find_first_not_of("0123456789.", dash + 1) == std::string::npos)
        name.resize(dash);
    if (size_t d = name.find_last_of('-'); d != std::string::npos && name.find("-linux") != std::string::npos)
        name = name.substr(d + 1);
    for (const char* h : host)
        if (name == h) return true;
    return false;
}

namespace {

// `passed_over`: what else to pass over (a copy of the launcher); a plain function, so the shim,
// which passes none, links no file comparison (and no iostreams: shims/check_no_locale.cmake).
fs::path first_system_tool(const std::string& tool, const std::string& path_list, const fs::path& shims_dir,
                           const std::optional<platform::FileId>& self,
                           bool (*passed_over)(const fs::path& candidate, const fs::path& self_file),
                           const fs::path& self_file) {
    std::optional<std::optional<platform::FileId>> shims_id; // looked up once, when first needed
    std::string shims = shims_dir.u8string();
    while (shims.size() > 1 && (shims.back() == '/' || shims.back() == '\\')) shims.pop_back();
    for (const auto& dir : split_path_list(path_list, platform::host_os())) {
        if (dir.empty()) continue;
        fs::path candidate;
        std::optional<platform::FileId> id;
        if (platform::host_os() == platform::Os::Windows) {
            candidate = platform::find_executable(tool, dir); // tries PATHEXT's suffixes
            if (!candidate.empty()) id = platform::file_id(candidate);
        } else {
            candidate = fs::u8path(dir) / fs::u8path(tool);
            id = platform::executable_id(candidate);
        }
        if (!id) continue;
        if (self && *id == *self) continue;
        // A copy of the launcher in the shims folder (Windows, or where links failed) is no
        // link to it, so the folder itself is compared too.
        std::string d = dir;
        while (d.size() > 1 && (d.back() == '/' || d.back() == '\\')) d.pop_back();
        if (d == shims) continue;
        if (!shims_id) shims_id = platform::file_id(shims_dir);
        if (*shims_id && platform::file_id(fs::u8path(dir)) == **shims_id) continue;
        if (passed_over && passed_over(candidate, self_file)) continue;
        return candidate;
    }
    return {};
}

} // namespace

fs::path find_system_tool(const std::string& tool, const std::string& path_list,
                          const fs::path& shims_dir, const std::optional<platform::FileId>& self) {
    return first_system_tool(tool, path_list, shims_dir, self, nullptr, {});
}

fs::path find_system_tool(const std::string& tool, const std::string& path_list,
                          const fs::path& shims_dir, const fs::path& self) {
    if (self.empty()) return first_system_tool(tool, path_list, shims_dir, std::nullopt, nullptr, {});
    return first_system_tool(tool, path_list, shims_dir, platform::file_id(self), platform::same_bytes, self);
}

// The names of one bin folder's executables that deserve a shim.
static void tools_in(const fs::path& bin, std::set<std::string>& tools) {
    std::error_code ec;
    for (fs::directory_iterator it(bin, ec), end; !ec && it != end; it.increment(ec)) {
        if (!platform::is_executable(it->path())) continue;
        std::string name = it->path().filename().u8string();
        if (name.empty() || name[0] == '.' || name[0] == '_') continue;
        if (platform::host_os() == platform::Os::Windows) {
            // Only .exe files get a shim; .bat/.cmd cannot be started directly.
            std::string lower = ascii_lower(name);
            if (lower.size() < 4 || lower.compare(lower.size() - 4, 4, ".exe") != 0) continue;
            name = lower;
        }
        if (is_host_program(name)) continue;
        tools.insert(name);
    }
}

ToolkitTools toolkit_tools(const Store& store) {
    std::set<std::string> tools;
    ToolkitTools out;
    for (const Entry& e : store.list(Kind::Cuda)) {
        for (const auto& b : e.bin_dirs) {
            fs::path bin = b.empty() || b == "." ? e.path : e.path / fs::u8path(b);
            if (is_system_folder(bin.u8string(), platform::host_os())) {
                // Every program of the machine would get a shim (pyenv #2696's cousin).
                out.warnings.push_back("toolkit " + e.id + " names the system folder " + bin.u8string() +
                                       " as its bin, so it gets no shims; run `cvm uninstall " + e.id +
                                       "` and `cvm import` of its folder again");
                continue;
            }
            tools_in(bin, tools);
        }
    }
    out.names.assign(tools.begin(), tools.end());
    return out;
}

std::vector<std::string> toolkits_with(const Store& store, const std::string& tool) {
    std::vector<std::string> ids;
    if (is_host_program(tool)) return ids;
    for (const Entry& e : store.list(Kind::Cuda)) {
        for (const auto& b : e.bin_dirs) {
            fs::path bin = b.empty() || b == "." ? e.path : e.path / fs::u8path(b);
            if (is_system_folder(bin.u8string(), platform::host_os())) continue;
            if (platform::is_executable(bin / fs::u8path(tool))) {
                ids.push_back(e.id);
                break;
            }
        }
    }
    return ids;
}

RehashResult rehash(const Store& store, const fs::path& shim) {
    RehashResult r;
    fs::path dir = store.shims_dir();
    fs::create_directories(dir);
    // The folder is on PATH before everything: nobody else may be able to put programs there.
    if (auto meta = platform::file_meta(dir)) check_trusted("the shims folder", dir, *meta);
    ToolkitTools found = toolkit_tools(store);
    const auto& tools = found.names;
    r.warnings = std::move(found.warnings);
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
