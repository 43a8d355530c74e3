#include "activation/environment.h"

#include <algorithm>
#include <system_error>

#include "text/path_list.h"

namespace cvm {

static fs::path join_rel(const fs::path& base, const std::string& rel) {
    return rel.empty() || rel == "." ? base : base / fs::u8path(rel);
}

namespace {

void add_unique(std::vector<fs::path>& v, const fs::path& p) {
    if (std::find(v.begin(), v.end(), p) == v.end()) v.push_back(p);
}

// The toolkit's library folders less those that are a link to another of them (lib64 -> lib in
// the wheels' and conda's layouts): the dynamic loader would search the same folder twice, a
// dozen hardware-capability subfolders each time. An lstat per folder, only when there are two.
std::vector<std::string> distinct_lib_dirs(const Entry& tk) {
    if (tk.lib_dirs.size() < 2) return tk.lib_dirs;
    std::vector<std::string> out;
    for (const auto& d : tk.lib_dirs) {
        std::error_code ec;
        fs::path target = fs::read_symlink(join_rel(tk.path, d), ec);
        bool alias = false;
        if (!ec && target.is_relative()) {
            std::string t =
                (fs::u8path(d).parent_path() / target).lexically_normal().generic_u8string();
            for (const auto& other : tk.lib_dirs)
                if (other != d && fs::u8path(other).lexically_normal().generic_u8string() == t)
                    alias = true;
        }
        if (!alias) out.push_back(d);
    }
    return out.empty() ? tk.lib_dirs : out;
}

} // namespace

Layout layout_of(const Resolved& r, const fs::path& view, platform::Os os) {
    Layout l;
    const Entry& tk = r.toolkit;
    const bool windows = os == platform::Os::Windows;
    l.toolkit_version = tk.version;
    l.active = r.active();
    l.cuda_path = view.empty() ? tk.path : view;
    // With a view, programs are started from its bin (a real folder of links): nvcc takes its
    // include and library folders from the path it was started by, and the view's hold cuDNN.
    const fs::path& top = view.empty() ? tk.path : view;
    for (const auto& b : tk.bin_dirs) {
        add_unique(l.tool_dirs, join_rel(tk.path, b));
        add_unique(l.bin_dirs, join_rel(top, b));
    }
    const char* nvcc = windows ? "nvcc.exe" : "nvcc";
    for (size_t i = 0; i < tk.bin_dirs.size() && !l.nvcc; ++i)
        if (platform::exists((join_rel(tk.path, tk.bin_dirs[i]) / nvcc).u8string()))
            l.nvcc = join_rel(top, tk.bin_dirs[i]) / nvcc;
    const auto tk_libs = distinct_lib_dirs(tk);
    // Where a build finds a cuDNN's or NCCL's header and library: the view's folders (which hold
    // the linker's libcudnn.so / libnccl.so even where the build ships only the versioned name),
    // else the build's own.
    auto seen_at = [&](const Entry& e, std::optional<fs::path>& include_dir,
                       std::optional<fs::path>& lib_dir) {
        if (!view.empty()) {
            include_dir = view / "include";
            std::string lib = !tk_libs.empty() ? tk_libs.front() : (windows ? "lib/x64" : "lib64");
            lib_dir = join_rel(view, lib);
            return;
        }
        if (!e.include_dirs.empty()) include_dir = join_rel(e.path, e.include_dirs.front());
        if (!e.lib_dirs.empty()) lib_dir = join_rel(e.path, e.lib_dirs.front());
    };
    if (r.cudnn) {
        const Entry& dnn = *r.cudnn;
        l.cudnn_path = dnn.path;
        if (windows)
            for (const auto& b : dnn.bin_dirs) {
                add_unique(l.tool_dirs, join_rel(dnn.path, b));
                // The view's bin holds cuDNN's DLLs beside the toolkit's programs.
                if (view.empty()) add_unique(l.bin_dirs, join_rel(dnn.path, b));
            }
        seen_at(dnn, l.cudnn_include_dir, l.cudnn_lib_dir);
    }
    if (r.nccl) {
        l.nccl_path = r.nccl->path;
        seen_at(*r.nccl, l.nccl_include_dir, l.nccl_lib_dir);
    }
    if (windows) return l; // no LD_LIBRARY_PATH, LIBRARY_PATH or CPATH there
    if ((r.cudnn || r.nccl) && !view.empty()) {
        // The view's library folders hold the toolkit's libraries, cuDNN's and NCCL's side by
        // side (view.cpp), so one folder on LD_LIBRARY_PATH does for all: the dynamic loader
        // probes a dozen hardware-capability subfolders of every folder listed there, before
        // every program a shim runs. Its include folder holds all the headers, cuDNN's winning.
        bool libs = false;
        for (const Entry* e : r.libraries())
            libs = libs || !e->lib_dirs.empty();
        if (!tk_libs.empty())
            for (const auto& d : tk_libs)
                add_unique(l.lib_dirs, join_rel(view, d));
        else if (libs)
            add_unique(l.lib_dirs, view / "lib64");
        // cuDNN's and NCCL's own include folders first: a build system that names the view's
        // include folder itself (CMake's CUDA::cudart, as -isystem) makes gcc drop that folder
        // from CPATH, and a toolkit include folder later on CPATH (an Lmod cuda module's) would
        // then come first.
        for (const Entry* e : r.libraries())
            for (const auto& d : e->include_dirs)
                add_unique(l.include_dirs, join_rel(e->path, d));
        add_unique(l.include_dirs, view / "include");
        return l;
    }
    for (const auto& d : tk_libs)
        add_unique(l.lib_dirs, join_rel(top, d));
    if (tk.include_dirs.empty()) add_unique(l.include_dirs, top / "include");
    for (const auto& d : tk.include_dirs)
        add_unique(l.include_dirs, join_rel(top, d));
    for (const Entry* e : r.libraries()) {
        for (const auto& d : e->lib_dirs)
            add_unique(l.lib_dirs, join_rel(e->path, d));
        for (const auto& d : e->include_dirs)
            add_unique(l.include_dirs, join_rel(e->path, d));
    }
    return l;
}

static std::string normalized(std::string s, platform::Os os) {
    if (os == platform::Os::Windows) {
        for (auto& c : s) {
            if (c == '/') c = '\\';
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
        }
        while (s.size() > 3 && s.back() == '\\')
            s.pop_back();
    } else {
        while (s.size() > 1 && s.back() == '/')
            s.pop_back();
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
    static const std::vector<const char*> dirs = {"/bin",           "/sbin",
                                                  "/usr/bin",       "/usr/sbin",
                                                  "/usr/local/bin", "/usr/local/sbin",
                                                  "/lib",           "/lib64",
                                                  "/usr/lib",       "/usr/lib64",
                                                  "/usr/local/lib", "/usr/lib32",
                                                  "/lib32",         "/usr/local/lib64",
                                                  "/usr/include",   "/usr/local/include"};
    return dirs;
}

const std::vector<const char*>& cuda_header_probes() {
    static const std::vector<const char*> headers = {"cuda_runtime.h", "cudnn.h",
                                                     "cudnn_version.h"};
    return headers;
}

const std::vector<ListVariable>& list_variables(platform::Os os) {
    static const std::vector<ListVariable> linux_vars = {{"PATH", DirKind::Programs},
                                                         {"LD_LIBRARY_PATH", DirKind::Libraries},
                                                         {"LIBRARY_PATH", DirKind::Libraries},
                                                         {"CPATH", DirKind::Headers}};
    static const std::vector<ListVariable> windows_vars = {{"PATH", DirKind::Programs}};
    return os == platform::Os::Windows ? windows_vars : linux_vars;
}

bool is_list_variable(const std::string& name) {
    for (const auto& v : list_variables(platform::Os::Linux))
        if (name == v.name) return true;
    return false;
}

const char* const kHostCompilerMark = "_CVM_CCBIN";

const std::vector<const char*>& linux_cuda_library_probes() {
    static const std::vector<const char*> libs = {
        "libcudart.so",    "libcudnn.so",       "libcudnn.so.9",
        "libcudnn.so.8",   "libcudnn.so.7",     "libcudart.so.13",
        "libcudart.so.12", "libcudart.so.11.0", "libcudart.so.10.2"};
    return libs;
}

const std::vector<const char*>& windows_cuda_bin_probes() {
    static const std::vector<const char*> files = {"nvcc.exe", "cudnn64_9.dll", "cudnn64_8.dll",
                                                   "cudnn64_7.dll"};
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
    return (d.rfind("/usr/lib/", 0) == 0 || d.rfind("/lib/", 0) == 0 ||
            d.rfind("/usr/include/", 0) == 0) &&
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
        for (const auto& layer : rules.store_layers)
            layers.push_back(normalized(layer.u8string(), os));
    }
};

bool holds(const std::string& dir, const char* name, platform::Os os) {
    std::string p = dir;
    if (!p.empty() && p.back() != '/' && p.back() != '\\')
        p.push_back(os == platform::Os::Windows ? '\\' : '/');
    return platform::exists(p + name);
}

// `d` is normalized(raw).
bool foreign_dir(const std::string& raw, const std::string& d, const ForeignDirs& rules,
                 const NormalizedRules& norm, platform::Os os, DirKind kind) {
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
    switch (kind) {
    case DirKind::Programs:
        return holds(raw, "nvcc", os);
    case DirKind::Headers:
        for (const char* h : cuda_header_probes())
            if (holds(raw, h, os)) return true;
        return false;
    case DirKind::Libraries:
        for (const char* lib : linux_cuda_library_probes())
            if (holds(raw, lib, os)) return true;
        // A toolkit's stubs folder (LIBRARY_PATH=/usr/local/cuda/lib64/stubs on machines set up
        // by hand); a folder of the driver's libcuda.so that is not named so stays.
        return fs::u8path(d).filename() == "stubs" && holds(raw, "libcuda.so", os);
    }
    return false;
}

} // namespace

bool is_foreign_cuda_dir(const std::string& raw, const ForeignDirs& rules, platform::Os os,
                         DirKind kind) {
    return foreign_dir(raw, normalized(raw, os), rules, NormalizedRules(rules, os), os, kind);
}

// `first`, then what stays of `current`; with `after` (a normalized folder) present in
// `current`, `first` goes right after it instead.
static std::string prepend_filtered(const std::vector<fs::path>& first,
                                    const std::optional<std::string>& current,
                                    const ForeignDirs& rules, platform::Os os, DirKind kind,
                                    const std::string& after = {}) {
    const NormalizedRules norm(rules, os);
    std::vector<std::string> firsts, rest;
    std::vector<std::string> seen; // normalized forms of what is kept
    auto push = [&](std::vector<std::string>& to, const std::string& item, std::string n) {
        if (std::find(seen.begin(), seen.end(), n) != seen.end()) return;
        seen.push_back(std::move(n));
        to.push_back(item);
    };
    // A shared system folder is never moved to the front: it would put every other program of
    // the machine before the user's own folders.
    for (const auto& f : first) {
        std::string item = f.u8string();
        std::string n = normalized(item, os);
        if (!is_system_dir(n, os)) push(firsts, item, std::move(n));
    }
    size_t insert_at = 0; // in `rest`
    if (current) {
        std::vector<std::string> dropped; // normalized; a folder listed twice is probed once
        for (const auto& item : split_path_list(*current, os)) {
            if (item.empty()) continue;
            std::string n = normalized(item, os);
            if (std::find(seen.begin(), seen.end(), n) != seen.end() ||
                std::find(dropped.begin(), dropped.end(), n) != dropped.end())
                continue;
            if (foreign_dir(item, n, rules, norm, os, kind)) {
                dropped.push_back(std::move(n));
                continue;
            }
            bool is_after = !after.empty() && n == after;
            push(rest, item, std::move(n));
            if (is_after && insert_at == 0) insert_at = rest.size();
        }
    }
    rest.insert(rest.begin() + static_cast<std::ptrdiff_t>(insert_at), firsts.begin(),
                firsts.end());
    return join_path_list(rest, os);
}

std::vector<EnvChange> compute_environment(const Layout& layout, const EnvLookup& current,
                                           const ForeignDirs& rules, platform::Os os,
                                           PathOrder order) {
    std::vector<EnvChange> out;
    auto path_text = [&](const fs::path& p) {
        std::string s = p.u8string();
        if (os == platform::Os::Windows)
            for (auto& c : s)
                if (c == '/') c = '\\';
        return s;
    };
    auto optional_text = [&](const std::optional<fs::path>& p) -> std::optional<std::string> {
        if (!p) return std::nullopt;
        return path_text(*p);
    };
    std::string cuda_path = path_text(layout.cuda_path);
    // A toolkit registered as /usr (a distribution's package) has no prefix of its own;
    // CUDA_HOME=/usr would make build systems search the whole system as if it were CUDA.
    std::optional<std::string> home;
    if (!is_system_prefix(cuda_path, os)) home = cuda_path;
    out.push_back({"CUDA_PATH", home});
    out.push_back({"CUDA_HOME", home});
    out.push_back({"CUDA_PATH_V" + std::to_string(layout.toolkit_version.major()) + "_" +
                       std::to_string(layout.toolkit_version.minor()),
                   home});
    out.push_back({"CUDNN_PATH", optional_text(layout.cudnn_path)});
    // CMake looks for nvcc beside the C++ compiler (/usr/bin, where a distribution's nvcc sits)
    // before PATH; CUDACXX decides.
    out.push_back({"CUDACXX", optional_text(layout.nvcc)});
    // The names the frameworks' own builds read (PyTorch's setup.py, TensorFlow's configure).
    out.push_back({"CUDNN_ROOT", optional_text(layout.cudnn_path)});
    out.push_back({"CUDNN_INCLUDE_DIR", optional_text(layout.cudnn_include_dir)});
    out.push_back({"CUDNN_LIB_DIR", optional_text(layout.cudnn_lib_dir)});
    if (layout.nccl_path) {
        out.push_back({"NCCL_HOME", layout.nccl_path->u8string()});
        out.push_back({"NCCL_ROOT", layout.nccl_path->u8string()});
        out.push_back({"NCCL_INCLUDE_DIR", optional_text(layout.nccl_include_dir)});
        out.push_back({"NCCL_LIB_DIR", optional_text(layout.nccl_lib_dir)});
    }

    // The host compiler: the user's own choice (a value cvm did not put there) stays.
    const auto mark = current(kHostCompilerMark);
    auto users = [&](const char* name) {
        auto v = current(name);
        return v && !v->empty() && (!mark || *v != *mark);
    };
    const bool user_chose = users("CUDAHOSTCXX") || users("NVCC_CCBIN");
    const std::string& hc = layout.host_compiler.path;
    const bool hand_over = !user_chose && !hc.empty();
    if (!users("CUDAHOSTCXX"))
        out.push_back({"CUDAHOSTCXX", hand_over ? std::optional<std::string>(hc) : std::nullopt});
    if (!users("NVCC_CCBIN"))
        out.push_back({"NVCC_CCBIN", hand_over && layout.host_compiler.via_env
                                         ? std::optional<std::string>(hc)
                                         : std::nullopt});
    out.push_back({kHostCompilerMark, hand_over ? std::optional<std::string>(hc) : std::nullopt});

    std::string shims = order == PathOrder::AfterShims && !rules.shims_dir.empty()
                            ? normalized(rules.shims_dir.u8string(), os)
                            : std::string();
    for (const auto& var : list_variables(os)) {
        const std::string name = var.name;
        const std::vector<fs::path>& first = var.kind == DirKind::Programs  ? layout.bin_dirs
                                             : var.kind == DirKind::Headers ? layout.include_dirs
                                                                            : layout.lib_dirs;
        std::string value = prepend_filtered(first, current(name), rules, os, var.kind,
                                             name == "PATH" ? shims : std::string());
        // An empty CPATH or LIBRARY_PATH element means the current folder to gcc: unset instead.
        if (value.empty() && name != "PATH")
            out.push_back({name, std::nullopt});
        else
            out.push_back({name, value});
    }
    out.push_back({"CVM_ACTIVE", layout.active});
    return out;
}

std::vector<EnvChange> compute_environment(const Layout& layout,
                                           const std::optional<std::string>& current_path,
                                           const std::optional<std::string>& current_ld_path,
                                           const ForeignDirs& rules, platform::Os os) {
    EnvLookup current = [&](const std::string& name) -> std::optional<std::string> {
        if (name == "PATH") return current_path;
        if (name == "LD_LIBRARY_PATH") return current_ld_path;
        return std::nullopt;
    };
    return compute_environment(layout, current, rules, os);
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
            if (it != env.end())
                it->second = *c.value;
            else
                env[c.name] = *c.value;
        } else if (it != env.end()) {
            env.erase(it);
        }
    }
}

} // namespace cvm
