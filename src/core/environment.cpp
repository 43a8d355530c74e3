#include "core/environment.h"

#include <algorithm>
#include <system_error>

namespace cvm {

static fs::path join_rel(const fs::path& base, const std::string& rel) {
    return rel.empty() || rel == "." ? base : base / fs::u8path(rel);
}

Layout layout_of(const Resolved& r, const fs::path& view, platform::Os os) {
    Layout l;
    const Entry& tk = r.toolkit;
    l.toolkit_version = tk.version;
    l.active = r.active();
    l.cuda_path = view.empty() ? tk.path : view;
    auto add = [](std::vector<fs::path>& v, const fs::path& p) {
        if (std::find(v.begin(), v.end(), p) == v.end()) v.push_back(p);
    };
    for (const auto& b : tk.bin_dirs) add(l.bin_dirs, join_rel(tk.path, b));
    if (r.cudnn) {
        l.cudnn_path = r.cudnn->path;
        if (os == platform::Os::Windows)
            for (const auto& b : r.cudnn->bin_dirs) add(l.bin_dirs, join_rel(r.cudnn->path, b));
    }
    if (r.cudnn && !view.empty() && os == platform::Os::Linux) {
        // The view's library folders hold the toolkit's libraries and cuDNN's side by side
        // (view.cpp), so one folder on LD_LIBRARY_PATH does for both: the dynamic loader probes
        // a dozen hardware-capability subfolders of every folder listed there, before every
        // program a shim runs.
        if (!tk.lib_dirs.empty())
            for (const auto& d : tk.lib_dirs) add(l.lib_dirs, join_rel(view, d));
        else if (!r.cudnn->lib_dirs.empty())
            add(l.lib_dirs, view / "lib64");
        return l;
    }
    for (const auto& d : tk.lib_dirs) add(l.lib_dirs, join_rel(tk.path, d));
    if (r.cudnn)
        for (const auto& d : r.cudnn->lib_dirs) add(l.lib_dirs, join_rel(r.cudnn->path, d));
    return l;
}

std::vector<std::string> split_path_list(const std::string& list, platform::Os os) {
    std::vector<std::string> out;
    char sep = platform::path_list_separator(os);
    size_t start = 0;
    while (start <= list.size()) {
        size_t end = list.find(sep, start);
        if (end == std::string::npos) end = list.size();
        out.push_back(list.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

std::string join_path_list(const std::vector<std::string>& items, platform::Os os) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) out.push_back(platform::path_list_separator(os));
        out += items[i];
    }
    return out;
}

static std::string normalized(std::string s, platform::Os os) {
    if (os == platform::Os::Windows) {
        for (auto& c : s) {
            if (c == '/') c = '\\';
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
        }
        while (s.size() > 3 && s.back() == '\\') s.pop_back();
    } else {
        while (s.size() > 1 && s.back() == '/') s.pop_back();
    }
    return s;
}

static bool under(const std::string& dir, const std::string& root, platform::Os os) {
    if (root.empty()) return false;
    char sep = os == platform::Os::Windows ? '\\' : '/';
    return dir == root || (dir.size() > root.size() && dir.compare(0, root.size(), root) == 0 &&
                           dir[root.size()] == sep);
}

const std::vector<const char*>& linux_system_dirs() {
    static const std::vector<const char*> dirs = {
        "/bin",     "/sbin",      "/usr/bin",       "/usr/sbin",  "/usr/local/bin", "/usr/local/sbin",
        "/lib",     "/lib64",     "/usr/lib",       "/usr/lib64", "/usr/local/lib", "/usr/lib32",
        "/lib32",   "/usr/local/lib64"};
    return dirs;
}

const std::vector<const char*>& linux_cuda_library_probes() {
    static const std::vector<const char*> libs = {
        "libcudart.so",  "libcudnn.so",     "libcudnn.so.9",     "libcudnn.so.8",    "libcudnn.so.7",
        "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so.10.2"};
    return libs;
}

const std::vector<const char*>& windows_cuda_bin_probes() {
    static const std::vector<const char*> files = {"nvcc.exe", "cudnn64_9.dll", "cudnn64_8.dll", "cudnn64_7.dll"};
    return files;
}

static bool is_system_dir(const std::string& d, platform::Os os) {
    if (os == platform::Os::Windows) {
        // C:\Windows and everything below it (System32, SysWOW64...).
        return d.size() >= 10 && d[1] == ':' && d.compare(2, 8, "\\windows") == 0 &&
               (d.size() == 10 || d[10] == '\\');
    }
    // Every system folder starts with one of these; most PATH entries are rejected here.
    if (d.rfind("/usr", 0) != 0 && d.rfind("/bin", 0) != 0 && d.rfind("/sbin", 0) != 0 &&
        d.rfind("/lib", 0) != 0)
        return false;
    for (const char* s : linux_system_dirs())
        if (d == s) return true;
    // Multiarch folders such as /usr/lib/x86_64-linux-gnu hold the distribution's own copies.
    return (d.rfind("/usr/lib/", 0) == 0 || d.rfind("/lib/", 0) == 0) &&
           d.find("-linux-gnu") != std::string::npos &&
           d.find('/', d.find("-linux-gnu")) == std::string::npos;
}

bool is_system_folder(const std::string& dir, platform::Os os) {
    return !dir.empty() && is_system_dir(normalized(dir, os), os);
}

bool is_system_prefix(const std::string& dir, platform::Os os) {
    if (dir.empty()) return false;
    std::string d = normalized(dir, os);
    if (os == platform::Os::Windows)
        return (d.size() == 3 && d[1] == ':' && d[2] == '\\') || is_system_dir(d, os);
    return d == "/" || d == "/usr" || d == "/usr/local" || is_system_dir(d, os);
}

namespace {

// The rules in the form is_foreign_cuda_dir compares with, computed once per list rather than
// once per element (the shim filters PATH and LD_LIBRARY_PATH before every tool).
struct NormalizedRules {
    std::string shims_dir;
    std::vector<std::string> layers;
    NormalizedRules(const ForeignDirs& rules, platform::Os os) {
        if (!rules.shims_dir.empty()) shims_dir = normalized(rules.shims_dir.u8string(), os);
        for (const auto& layer : rules.store_layers) layers.push_back(normalized(layer.u8string(), os));
    }
};

bool holds(const std::string& dir, const char* name, platform::Os os) {
    std::string p = dir;
    if (!p.empty() && p.back() != '/' && p.back() != '\\') p.push_back(os == platform::Os::Windows ? '\\' : '/');
    return platform::exists(p + name);
}

// `d` is normalized(raw).
bool foreign_dir(const std::string& raw, const std::string& d, const ForeignDirs& rules,
                 const NormalizedRules& norm, platform::Os os, bool library_dir) {
    if (raw.empty()) return false;
    if (is_system_dir(d, os)) return false;
    if (!norm.shims_dir.empty() && d == norm.shims_dir) return false;
    for (const auto& layer : norm.layers)
        if (under(d, layer, os)) return true;
    if (os == platform::Os::Windows &&
        d.find("\\nvidia gpu computing toolkit\\cuda\\") != std::string::npos)
        return true;
    if (!rules.probe_filesystem) return false;
    if (os == platform::Os::Windows) {
        for (const char* f : windows_cuda_bin_probes())
            if (holds(raw, f, os)) return true;
        return false;
    }
    if (!library_dir) return holds(raw, "nvcc", os);
    for (const char* lib : linux_cuda_library_probes())
        if (holds(raw, lib, os)) return true;
    return false;
}

} // namespace

bool is_foreign_cuda_dir(const std::string& raw, const ForeignDirs& rules, platform::Os os,
                         bool library_dir) {
    return foreign_dir(raw, normalized(raw, os), rules, NormalizedRules(rules, os), os, library_dir);
}

static std::string prepend_filtered(const std::vector<fs::path>& first,
                                    const std::optional<std::string>& current,
                                    const ForeignDirs& rules, platform::Os os, bool library) {
    const NormalizedRules norm(rules, os);
    std::vector<std::string> items;
    std::vector<std::string> seen; // normalized forms of `items`
    auto push = [&](const std::string& item, std::string n) {
        if (std::find(seen.begin(), seen.end(), n) != seen.end()) return;
        seen.push_back(std::move(n));
        items.push_back(item);
    };
    // A shared system folder is never moved to the front: it would put every other program of
    // the machine before the user's own folders.
    for (const auto& f : first) {
        std::string item = f.u8string();
        std::string n = normalized(item, os);
        if (!is_system_dir(n, os)) push(item, std::move(n));
    }
    if (current) {
        std::vector<std::string> dropped; // normalized; a folder listed twice is probed once
        for (const auto& item : split_path_list(*current, os)) {
            if (item.empty()) continue;
            std::string n = normalized(item, os);
            if (std::find(seen.begin(), seen.end(), n) != seen.end() ||
                std::find(dropped.begin(), dropped.end(), n) != dropped.end())
                continue;
            if (foreign_dir(item, n, rules, norm, os, library)) {
                dropped.push_back(std::move(n));
                continue;
            }
            push(item, std::move(n));
        }
    }
    return join_path_list(items, os);
}

std::vector<EnvChange> compute_environment(const Layout& layout,
                                           const std::optional<std::string>& current_path,
                                           const std::optional<std::string>& current_ld_path,
                                           const ForeignDirs& rules, platform::Os os) {
    std::vector<EnvChange> out;
    std::string cuda_path = layout.cuda_path.u8string();
    if (os == platform::Os::Windows)
        for (auto& c : cuda_path)
            if (c == '/') c = '\\';
    // A toolkit registered as /usr (a distribution's package) has no prefix of its own; CUDA_HOME=/usr
    // would make build systems search the whole system as if it were CUDA.
    std::optional<std::string> home;
    if (!is_system_prefix(cuda_path, os)) home = cuda_path;
    out.push_back({"CUDA_PATH", home});
    out.push_back({"CUDA_HOME", home});
    out.push_back({"CUDA_PATH_V" + std::to_string(layout.toolkit_version.major()) + "_" +
                       std::to_string(layout.toolkit_version.minor()),
                   home});
    if (layout.cudnn_path)
        out.push_back({"CUDNN_PATH", layout.cudnn_path->u8string()});
    else
        out.push_back({"CUDNN_PATH", std::nullopt});
    out.push_back({"PATH", prepend_filtered(layout.bin_dirs, current_path, rules, os, false)});
    if (os == platform::Os::Linux)
        out.push_back(
            {"LD_LIBRARY_PATH", prepend_filtered(layout.lib_dirs, current_ld_path, rules, os, true)});
    out.push_back({"CVM_ACTIVE", layout.active});
    return out;
}

ForeignDirs foreign_dirs_of(const Store& store) {
    ForeignDirs f;
    f.store_layers = store.layers();
    f.shims_dir = store.shims_dir();
    return f;
}

void apply_changes(std::map<std::string, std::string>& env, const std::vector<EnvChange>& changes,
                   platform::Os os) {
    for (const auto& c : changes) {
        auto it = env.begin();
        for (; it != env.end(); ++it) {
            bool same = os == platform::Os::Windows ? platform::env_name_equal(it->first, c.name)
                                                    : it->first == c.name;
            if (same) break;
        }
        if (c.value) {
            if (it != env.end()) it->second = *c.value;
            else env[c.name] = *c.value;
        } else if (it != env.end()) {
            env.erase(it);
        }
    }
}

} // namespace cvm
