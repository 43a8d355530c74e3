#include "python_env.h"
#include "wheel_metadata.h"

#include "binary/elf_reader.h"
#include "binary/nccl_version.h"

#include "layouts/folder_facts.h"
#include "config/program_trust.h"
#include "platform/platform.h"
#include "text/affixes.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

namespace cvm::doctor {

namespace {

// The quoted string starting at `at` ('...' or "..."), nullopt when there is none.
std::optional<std::string> quoted_at(std::string_view text, std::size_t at) {
    while (at < text.size() && (text[at] == ' ' || text[at] == '\t'))
        ++at;
    if (at >= text.size() || (text[at] != '\'' && text[at] != '"')) return std::nullopt;
    const char quote = text[at];
    const auto end = text.find(quote, at + 1);
    if (end == std::string_view::npos) return std::nullopt;
    return std::string(text.substr(at + 1, end - at - 1));
}

// Whether cuDNN's front library in `dir` (libcudnn.so.N) has DT_RPATH with $ORIGIN and no
// DT_RUNPATH (which would make ld.so ignore the RPATH): its dlopen of a sub-library by name then
// looks in its own folder before LD_LIBRARY_PATH.
bool front_library_rpath(const FileSystemView& fs, const std::string& dir) {
    std::vector<std::string> names = fs.list(dir);
    std::sort(names.begin(), names.end());
    for (const auto& n : names) {
        if (!starts_with(n, "libcudnn.so.") || n.find('.', 12) != std::string::npos) continue;
        auto src = fs.open(path_join(dir, n));
        if (!src) return false;
        auto elf = binary::read_elf(*src);
        if (!elf) return false;
        if (elf.info->runpath || !elf.info->rpath) return false;
        for (const auto& e : elf.info->rpath_entries())
            if (e == "$ORIGIN" || e == "${ORIGIN}") return true;
        return false;
    }
    return false;
}

bool holds_cudnn(const FileSystemView& fs, const std::string& dir) {
    for (const auto& n : fs.list(dir))
        if (starts_with(n, "libcudnn.so") || starts_with(n, "cudnn64_")) return true;
    return false;
}

// The nvidia-cudnn-cu* wheel's library folder beside a package, when installed.
void wheel_cudnn(const FileSystemView& fs, const std::string& site, FrameworkInstall& f) {
    const std::string cudnn = path_join(path_join(site, "nvidia"), "cudnn");
    for (const char* sub : {"lib", "bin"}) {
        const std::string dir = path_join(cudnn, sub);
        if (fs.is_directory(dir) && holds_cudnn(fs, dir)) {
            f.own_cudnn_dir = dir;
            f.own_cudnn_version = installed_dist_version(fs, site, "nvidia_cudnn_cu");
            f.own_cudnn_rpath = front_library_rpath(fs, dir);
            return;
        }
    }
}

// PyTorch's NCCL: the nvidia-nccl-cu* wheel beside it (what it loads on Linux), else a copy in
// torch/lib (older wheels bundled it).
void own_nccl(const FileSystemView& fs, const std::string& site, const std::string& torch,
              FrameworkInstall& f) {
    for (const std::string& dir : {path_join(path_join(path_join(site, "nvidia"), "nccl"), "lib"),
                                   path_join(torch, "lib")}) {
        const std::string lib = path_join(dir, "libnccl.so.2");
        if (!fs.is_file(lib)) continue;
        f.own_nccl_library = lib;
        auto src = fs.open(lib);
        if (auto banner = src ? binary::read_nccl_banner(*src) : std::nullopt) {
            f.own_nccl_version = banner->version_text();
            if (banner->cuda_major) f.own_nccl_cuda = banner->cuda_text();
        }
        return;
    }
}

// The METADATA of the first dist-info in `site` whose name starts with `dist` ("torch-"), or an
// empty text (none, or unreadable).
std::string dist_metadata(const FileSystemView& fs, const std::string& site, std::string_view dist) {
    std::vector<std::string> names = fs.list(site);
    std::sort(names.begin(), names.end());
    for (const auto& n : names)
        if (starts_with(n, dist) && ends_with(n, ".dist-info"))
            return text_of(fs, path_join(path_join(site, n), "METADATA"));
    return {};
}

// JAX's CUDA plugin: its extensions (jax_cuda13_plugin/) and its PJRT library
// (jax_plugins/xla_cuda13/), each a wheel of its own; the newest CUDA major first.
struct JaxPlugin {
    std::string site;
    std::string dist; // "jax_cuda13_plugin-"
    std::string cuda_major;
};

std::optional<JaxPlugin> find_jax_plugin(const FileSystemView& fs, const std::vector<std::string>& search_path) {
    for (const char* major : {"13", "12"}) {
        const std::string plugin = std::string("jax_cuda") + major + "_plugin";
        const std::string pjrt = path_join("jax_plugins", std::string("xla_cuda") + major);
        for (const auto& site : search_path) {
            if (site.empty()) continue;
            if (fs.is_directory(path_join(site, plugin)) || fs.is_directory(path_join(site, pjrt)))
                return JaxPlugin{site, plugin + "-", major};
        }
    }
    return std::nullopt;
}

// JAX in `site` (its jax/ folder holds version.py or __init__.py): its version (version.py's
// _release_version, else its _version, else the dist-info's name), and from its CUDA plugin the CUDA
// and cuDNN it was built for (the lower bounds of the plugin's METADATA requirements) and the cuDNN
// wheel its preload loads (nvidia/cudnn/lib beside the plugin). Files only: nothing is imported.
std::optional<FrameworkInstall> find_jax(const FileSystemView& fs, const std::string& site,
                                         const std::vector<std::string>& search_path) {
    const std::string jax = path_join(site, "jax");
    const std::string version_py = path_join(jax, "version.py");
    if (!fs.is_file(version_py) && !fs.is_file(path_join(jax, "__init__.py"))) return std::nullopt;
    FrameworkInstall f;
    f.name = "jax";
    f.location = jax;
    const std::string text = text_of(fs, version_py);
    auto version = python_string_assignment(text, "_release_version");
    if (!version) version = python_string_assignment(text, "_version");
    if (!version) version = installed_dist_version(fs, site, "jax-");
    f.version = version.value_or("");
    auto plugin = find_jax_plugin(fs, search_path);
    if (!plugin) return f; // a CPU-only JAX
    const std::string metadata = dist_metadata(fs, plugin->site, plugin->dist);
    auto runtime = metadata_requirement(metadata, "nvidia-cuda-runtime");
    auto cuda = runtime ? specifier_floor(*runtime) : std::nullopt;
    // "13.0.48" gives "13.0"; without its METADATA, the major its name says.
    f.cuda = cuda && starts_with(*cuda, plugin->cuda_major + ".")
                 ? cuda->substr(0, cuda->find('.', plugin->cuda_major.size() + 1))
                 : plugin->cuda_major;
    if (auto cudnn = metadata_requirement(metadata, "nvidia-cudnn-cu")) f.cudnn = specifier_floor(*cudnn);
    wheel_cudnn(fs, plugin->site, f);
    const std::string pjrt = path_join(path_join(plugin->site, "jax_plugins"), "xla_cuda" + plugin->cuda_major);
    f.own_cublas = read_own_cublas(fs, plugin->site, {path_join(pjrt, "__init__.py")});
    return f;
}

} // namespace

std::string framework_title(const std::string& name) {
    if (name == "pytorch") return "PyTorch";
    if (name == "jax") return "JAX";
    return "TensorFlow";
}

std::string framework_module(const std::string& name) {
    return name == "pytorch" ? "torch" : name;
}

std::optional<std::string> python_string_assignment(std::string_view text, std::string_view name) {
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto eol = text.find('\n', pos);
        std::string_view line =
            text.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
        pos = eol == std::string_view::npos ? text.size() : eol + 1;
        if (!starts_with(line, name)) continue;
        std::size_t at = name.size();
        // Optional annotation: "cuda: Optional[str] = '12.1'".
        if (at < line.size() && line[at] == ':') {
            auto eq = line.find('=', at);
            if (eq == std::string_view::npos) continue;
            at = eq;
        } else {
            while (at < line.size() && line[at] == ' ')
                ++at;
            if (at >= line.size() || line[at] != '=') continue;
        }
        return quoted_at(line, at + 1); // nullopt for "= None"
    }
    return std::nullopt;
}

std::optional<std::string> build_info_value(std::string_view text, std::string_view key) {
    for (const char* quote : {"'", "\""}) {
        const std::string pattern = std::string(quote) + std::string(key) + quote;
        auto at = text.find(pattern);
        if (at == std::string_view::npos) continue;
        // {'cuda_version': '11.2'} (a dict) or, as real wheels write it since 2.4,
        // OrderedDict([('cuda_version', '11.2'), ...]) (pairs).
        auto sep = text.find_first_of(":,", at + pattern.size());
        if (sep == std::string_view::npos || sep > at + pattern.size() + 4) continue;
        if (auto v = quoted_at(text, sep + 1)) return v;
    }
    // TensorFlow before 2.4: module-level names cuda_version_number / cudnn_version_number.
    return python_string_assignment(text, std::string(key) + "_number");
}

namespace {

// A package folder whose version file (`version_file`, below it) is missing or unreadable while
// its __init__.py or its dist-info (`dist`) says it is installed: half-installed, or closed to the
// user. nullopt when the package is whole or not there.
std::optional<FrameworkInstall> damaged_package(const FileSystemView& fs, const std::string& site,
                                                const std::string& package, const std::string& version_file,
                                                const char* name, const char* dist) {
    const std::string folder = path_join(site, package);
    const std::string file = path_join(folder, version_file);
    if (fs.is_file(file) || !fs.is_directory(folder)) return std::nullopt;
    auto version = installed_dist_version(fs, site, dist);
    if (!version && !fs.is_file(path_join(folder, "__init__.py"))) return std::nullopt;
    FrameworkInstall f;
    f.name = name;
    f.location = folder;
    f.version = version.value_or("");
    f.damaged = file + " is missing or unreadable";
    return f;
}

} // namespace

std::string reinstall_fix(const FrameworkInstall& f, const std::string& python) {
    return "reinstall it: `" + python + " -m pip install --force-reinstall --no-deps " + framework_module(f.name) +
           (f.version.empty() ? "" : "==" + f.version) + "` (from the index it came from)";
}

std::vector<FrameworkInstall> find_frameworks(const std::vector<std::string>& search_path,
                                              const FileSystemView& fs) {
    std::vector<FrameworkInstall> out;
    bool have_torch = false, have_tf = false, have_jax = false;
    for (const auto& site : search_path) {
        if (site.empty() || !fs.is_directory(site)) continue;
        const std::string torch = path_join(site, "torch");
        const std::string torch_version = path_join(torch, "version.py");
        if (!have_torch) {
            if (auto damaged = damaged_package(fs, site, "torch", "version.py", "pytorch", "torch-")) {
                have_torch = true;
                out.push_back(std::move(*damaged));
            }
        }
        if (!have_torch && fs.is_file(torch_version)) {
            have_torch = true;
            const std::string text = text_of(fs, torch_version);
            FrameworkInstall f;
            f.name = "pytorch";
            f.location = torch;
            f.version = python_string_assignment(text, "__version__").value_or("");
            f.cuda = python_string_assignment(text, "cuda");
            // The cuDNN it was built with: its METADATA's pin (the text of the build has none).
            if (auto req = metadata_requirement(dist_metadata(fs, site, "torch-"), "nvidia-cudnn-cu"))
                f.cudnn = specifier_pin(*req);
            const std::string lib = path_join(torch, "lib");
            if (fs.is_directory(lib) && holds_cudnn(fs, lib)) {
                f.own_cudnn_dir = lib;
            } else {
                wheel_cudnn(fs, site, f);
            }
            own_nccl(fs, site, torch, f);
            f.own_cublas = read_own_cublas(fs, site, {path_join(torch, "__init__.py"), path_join(path_join(torch, "lib"), "libtorch_cuda.so")});
            out.push_back(std::move(f));
        }
        const std::string tf = path_join(site, "tensorflow");
        const std::string build_info =
            path_join(path_join(path_join(tf, "python"), "platform"), "build_info.py");
        if (!have_tf) {
            if (auto damaged = damaged_package(fs, site, "tensorflow", path_join(path_join("python", "platform"), "build_info.py"),
                                               "tensorflow", "tensorflow-")) {
                have_tf = true;
                out.push_back(std::move(*damaged));
            }
        }
        if (!have_tf && fs.is_file(build_info)) {
            have_tf = true;
            const std::string text = text_of(fs, build_info);
            FrameworkInstall f;
            f.name = "tensorflow";
            f.location = tf;
            for (const char* dist :
                 {"tensorflow-", "tensorflow_gpu-", "tensorflow_intel-", "tensorflow_cpu-"}) {
                if (auto v = installed_dist_version(fs, site, dist)) {
                    f.version = *v;
                    break;
                }
            }
            f.cuda = build_info_value(text, "cuda_version");
            f.cudnn = build_info_value(text, "cudnn_version");
            wheel_cudnn(fs, site, f);
            f.own_cublas = read_own_cublas(fs, site, {});
            out.push_back(std::move(f));
        }
        if (!have_jax) {
            if (auto jax = find_jax(fs, site, search_path)) {
                have_jax = true;
                out.push_back(std::move(*jax));
            }
        }
    }
    return out;
}

const char* const kUserSitePrelude =
    "import os, site, sys\n"
    "def _cvm_user_site():\n"
    "    if sys.prefix != sys.base_prefix or os.environ.get('PYTHONNOUSERSITE'):\n"
    "        return\n"
    "    u = site.getusersitepackages()\n"
    "    if not os.path.isdir(u) or u in sys.path:\n"
    "        return\n"
    "    s = [i for i, p in enumerate(sys.path) if p in site.getsitepackages()]\n"
    "    sys.path.insert(s[0] if s else len(sys.path), u)\n"
    "_cvm_user_site()\n";

std::string default_python() {
    if (auto p = platform::get_env("CVM_PYTHON")) return *p;
    // An activated virtual environment, even where its bin folder is not first on PATH.
    if (auto venv = platform::get_env("VIRTUAL_ENV"); venv && !venv->empty()) {
        const bool windows = platform::host_os() == platform::Os::Windows;
        for (const char* name : {"python3", "python"}) {
            auto candidate = fs::u8path(*venv) / (windows ? "Scripts" : "bin") /
                             (std::string(name) + (windows ? ".exe" : ""));
            if (platform::is_executable(candidate) &&
                trusted_program(candidate, "the virtual environment's python"))
                return candidate.u8string();
        }
    }
    auto path = platform::get_env("PATH");
    for (const char* name : {"python3", "python"}) {
        auto found = find_trusted_program(name, path ? *path : std::string());
        if (!found.empty()) return found.u8string();
    }
    return {};
}

namespace {

// The report among what the interpreter printed: the last line that is a JSON object with a
// "path" list (a sitecustomize or a noisy startup may print before it).
std::optional<nlohmann::json> path_report(const std::string& out) {
    std::size_t end = out.size();
    while (end > 0) {
        std::size_t begin = out.rfind('\n', end - 1);
        begin = begin == std::string::npos ? 0 : begin + 1;
        const std::string line = out.substr(begin, end - begin);
        end = begin == 0 ? 0 : begin - 1;
        if (line.empty() || line[0] != '{') continue;
        nlohmann::json doc = nlohmann::json::parse(line, nullptr, false);
        if (!doc.is_discarded() && doc.is_object() && doc.contains("path") && doc["path"].is_array()) return doc;
    }
    return std::nullopt;
}

std::string first_line_of(const std::string& out) {
    std::string line = out.substr(0, out.find('\n'));
    if (line.size() > 120) line = line.substr(0, 120) + "...";
    return line;
}

} // namespace

std::optional<PythonInfo> inspect_python(const std::string& python, const FileSystemView& fs, std::string* why) {
    auto say = [&](const std::string& reason) {
        if (why) *why = reason;
        return std::nullopt;
    };
    if (python.empty()) return say("no Python was found");
    const int timeout_ms = 10000; // a python that hangs is given up on (10 s)
    // -I: no current folder or script folder on sys.path, no PYTHON* variables, no user site.
    const std::string program = std::string(kUserSitePrelude) +
                                "import json\nprint(json.dumps({'version': '%d.%d.%d' % tuple(sys.version_info[:3]),"
                                " 'path': sys.path}))\n";
    auto c = platform::capture_process(fs::u8path(python), {python, "-I", "-c", program}, timeout_ms, false);
    using End = platform::Captured::End;
    if (c.end == End::NotStarted) return say(python + " could not be started");
    if (c.end == End::TimedOut)
        return say(python + " did not say where its packages are within " + std::to_string(timeout_ms / 1000) +
                   " s and was stopped");
    if (c.end == End::Signaled) return say(python + " was killed by " + platform::signal_name(c.code));
    auto doc = path_report(c.out);
    if (!doc)
        return say(python + " printed no search path (exit " + std::to_string(c.code) + ")" +
                   (c.out.empty() ? std::string() : ": " + first_line_of(c.out)));
    PythonInfo info;
    info.executable = python;
    if (doc->contains("version") && (*doc)["version"].is_string()) info.version = (*doc)["version"].get<std::string>();
    for (const auto& p : (*doc)["path"])
        if (p.is_string() && !p.get<std::string>().empty()) info.search_path.push_back(p.get<std::string>());
    info.frameworks = find_frameworks(info.search_path, fs);
    return info;
}

} // namespace cvm::doctor
