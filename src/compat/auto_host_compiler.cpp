#include "compat/auto_host_compiler.h"

#include <set>
#include <system_error>

#include "compat/visual_studio.h"
#include "config/program_trust.h"
#include "activation/view.h"
#include "registry/registry.h"

namespace cvm::compat {

namespace fs = std::filesystem;

namespace {

fs::path nvcc_of(const Entry& toolkit) {
    const char* name = platform::host_os() == platform::Os::Windows ? "nvcc.exe" : "nvcc";
    std::vector<std::string> bins =
        toolkit.bin_dirs.empty() ? std::vector<std::string>{"bin"} : toolkit.bin_dirs;
    for (const auto& b : bins) {
        fs::path p = toolkit.path / fs::u8path(b) / name;
        if (platform::exists(p.u8string())) return p;
    }
    return toolkit.path / "bin" / name;
}

// Keeps `choice` in `file` (removes it for none); true when that changed what the file said.
bool write_choice(const fs::path& file, const std::optional<HostCompilerChoice>& choice) {
    std::error_code ec;
    auto before = platform::read_file(file, 1 << 14);
    if (!choice) {
        fs::remove(file, ec);
        return before.has_value();
    }
    std::string text = format_host_compiler_choice(*choice);
    if (before && *before == text) return false;
    fs::create_directories(file.parent_path(), ec);
    try { // replaced only when whole: a failed write leaves the old answer, never half of one
        platform::write_file_atomically(file, text);
    } catch (const std::exception&) {
        // a kept answer is a cache: without it the choice is made again next time
    }
    return true;
}

} // namespace

bool nvcc_honours_ccbin_env(const Entry& toolkit) {
    if (auto reads = nvcc_reads_ccbin_env(nvcc_of(toolkit))) return *reads;
    try {
        HostCompilerTable table = load_host_compiler_table();
        return !table.nvcc_ccbin_env.empty() && !(toolkit.version < table.nvcc_ccbin_env);
    } catch (const std::exception&) {
        return false;
    }
}

HostCompilerQuery toolkit_query(const Store& store, const Entry& toolkit) {
    HostCompilerQuery q;
    q.os = platform::host_os();
    q.nvcc = nvcc_of(toolkit);
    q.skip_dir = store.shims_dir();
    // nvcc's unaided pick: PATH without cvm's shims, no user flags.
    std::string path;
    const char sep = platform::path_list_separator();
    // CVM_COMPILER_PATH (tests) stands for the PATH compilers are looked up on.
    std::string current =
        platform::get_env("CVM_COMPILER_PATH").value_or(platform::get_env("PATH").value_or(""));
    size_t pos = 0;
    while (pos <= current.size()) {
        size_t end = current.find(sep, pos);
        std::string dir =
            current.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        pos = end == std::string::npos ? current.size() + 1 : end + 1;
        if (dir.empty() || fs::u8path(dir) == q.skip_dir) continue;
        path += (path.empty() ? "" : std::string(1, sep)) + dir;
    }
    q.env["PATH"] = path;
    if (q.os == platform::Os::Windows) {
        q.visual_studio_roots = default_visual_studio_roots();
        q.visual_studio_instances = default_visual_studio_instances();
    }
    return q;
}

std::optional<HostCompilerLimits> toolkit_limits(const Entry& toolkit) {
    if (auto l = read_toolkit_host_config(toolkit.path, toolkit.version)) return l;
    try {
        HostCompilerTable table = load_host_compiler_table();
        if (const auto* row = limits_for(table, toolkit.version)) return *row;
    } catch (const std::exception&) {
    }
    return std::nullopt;
}

PackageCheck distribution_packages() {
    // CVM_APT_CACHE (tests) names the apt-cache to ask; empty: none is asked.
    auto named = platform::get_env("CVM_APT_CACHE");
    if (named && named->empty()) return {};
    fs::path apt = fs::u8path(named.value_or("/usr/bin/apt-cache"));
    if (platform::host_os() == platform::Os::Windows || !platform::is_executable(apt) ||
        !trusted_program(apt, "the package lists' reader"))
        return {};
    return [apt](const std::vector<std::string>& names) -> std::optional<std::set<std::string>> {
        std::vector<std::string> args{apt.u8string(), "policy"}; // argv[0] first
        args.insert(args.end(), names.begin(), names.end());
        auto out = platform::capture_output(apt, args, 20000);
        if (!out) return std::nullopt;
        // "g++-11:\n  Installed: ...\n  Candidate: 11.3.0-12\n"; "(none)" when nothing can be
        // installed.
        std::set<std::string> found;
        std::string current;
        size_t pos = 0;
        bool any = false;
        while (pos < out->size()) {
            size_t end = out->find('\n', pos);
            std::string line =
                out->substr(pos, end == std::string::npos ? std::string::npos : end - pos);
            pos = end == std::string::npos ? out->size() : end + 1;
            if (!line.empty() && line[0] != ' ' && line.back() == ':')
                current = line.substr(0, line.size() - 1);
            const std::string key = "  Candidate: ";
            if (line.rfind(key, 0) == 0) {
                any = true;
                if (line.substr(key.size()) != "(none)") found.insert(current);
            }
        }
        // No package lists at all (a cleaned container image): nothing is known.
        if (!any) return std::nullopt;
        return found;
    };
}

std::string host_compiler_fix(const HostCompilerLimits& l, platform::Os os) {
    return host_compiler_fix(l, os,
                             os == platform::host_os() ? distribution_packages() : PackageCheck{});
}

std::string host_compiler_fix(const HostCompilerLimits& l, platform::Os os,
                              const PackageCheck& packaged) {
    if (os == platform::Os::Windows) {
        if (!l.msc_max) return "install a Visual Studio that CUDA " + l.cuda.str() + " supports";
        // _MSC_VER 19xx is the MSVC toolset 14.xx.
        return "install the MSVC v14." + std::to_string(*l.msc_max % 100) +
               " build tools (Visual Studio Installer, Individual components) or another "
               "compiler CUDA " +
               l.cuda.str() + " supports (" + l.describe(true) + ")";
    }
    // The newest few of each compiler the toolkit takes, and of those the ones the distribution
    // has.
    std::vector<std::string> wanted;
    for (unsigned i = 0; i < 4; ++i) {
        if (l.gcc_max && *l.gcc_max >= 5 + i)
            wanted.push_back("g++-" + std::to_string(*l.gcc_max - i));
        if (l.clang_max && *l.clang_max >= 5 + i)
            wanted.push_back("clang-" + std::to_string(*l.clang_max - i));
    }
    std::optional<std::set<std::string>> have;
    if (packaged && !wanted.empty()) have = packaged(wanted);
    if (have) {
        std::string gcc, clang;
        for (const auto& w : wanted) {
            if (!have->count(w)) continue;
            if (w.rfind("g++-", 0) == 0 && gcc.empty()) gcc = w;
            if (w.rfind("clang-", 0) == 0 && clang.empty()) clang = w;
        }
        if (!gcc.empty() || !clang.empty()) {
            std::string out = "install a supported compiler, e.g. ";
            if (!gcc.empty()) out += gcc + " (apt install " + gcc + ")";
            if (!clang.empty())
                out +=
                    std::string(gcc.empty() ? "" : " or ") + clang + " (apt install " + clang + ")";
            return out + ", or run nvcc with -ccbin naming one";
        }
        return "install a compiler CUDA " + l.cuda.str() + " supports (" + l.describe(false) +
               "; this machine's distribution packages none of them: build one, or use an older "
               "distribution's "
               "container), or run nvcc with -ccbin naming one";
    }
    return "install a compiler CUDA " + l.cuda.str() + " supports (" + l.describe(false) +
           "), or run nvcc with -ccbin naming one";
}

std::string host_compiler_line(const HostCompilerStatus& s) {
    if (s.problem.empty() || !s.limits) return {};
    if (s.choice)
        return "host compiler: " + s.choice->ccbin + " is handed to nvcc" +
               (s.choice->via_env ? " (NVCC_CCBIN, CUDAHOSTCXX)" : " (-ccbin, CUDAHOSTCXX)") +
               ": " + s.problem;
    if (!s.nvcc_default.chosen_by_nvcc())
        return "warning: " + s.problem + "; change " + s.nvcc_default.origin;
    return "warning: " + s.problem +
           "; no installed compiler fits: " + host_compiler_fix(*s.limits, platform::host_os());
}

std::optional<HostCompilerChoice> kept_host_compiler(const Store& store, const Entry& toolkit) {
    std::string mode;
    try {
        mode = host_compiler_mode();
    } catch (const std::exception&) {
        mode = "auto";
    }
    if (mode == "off") return std::nullopt;
    fs::path file = host_compiler_cache_file(store.root(), toolkit.id);
    if (!file.empty())
        if (auto text = platform::read_file(file, 1 << 14))
            if (auto kept = parse_host_compiler_choice(*text))
                // A kept compiler that another user could change now is not believed: the
                // choice is made again (skipping it, with a note).
                if (kept->ccbin.empty() || program_doubt(fs::u8path(kept->ccbin)).empty())
                    return kept;
    HostCompilerStatus s = refresh_host_compiler(store, toolkit);
    HostCompilerChoice out = s.choice.value_or(HostCompilerChoice{});
    out.line = host_compiler_line(s);
    return out;
}

HostCompilerStatus refresh_host_compiler(const Store& store, const Entry& toolkit) {
    fs::path file = host_compiler_cache_file(store.root(), toolkit.id);
    HostCompilerStatus s;
    std::string mode;
    try {
        mode = host_compiler_mode();
    } catch (const std::exception&) {
        mode = "auto";
    }
    if (mode == "off") {
        if (!file.empty() && write_choice(file, std::nullopt))
            refresh_toolkit_views(store, toolkit);
        return s;
    }
    auto limits = toolkit_limits(toolkit);
    s = host_compiler_status(toolkit_query(store, toolkit), limits ? &*limits : nullptr);
    // Reading nvcc (megabytes) only when there is something to hand over.
    if (s.choice) s.choice->via_env = nvcc_honours_ccbin_env(toolkit);
    if (!file.empty()) {
        HostCompilerChoice kept = s.choice.value_or(HostCompilerChoice{});
        kept.line = host_compiler_line(s);
        // The views' nvcc depends on how the compiler is handed over (view.h).
        if (write_choice(file, kept)) refresh_toolkit_views(store, toolkit);
    }
    if (s.choice) s.choice->line = host_compiler_line(s);
    return s;
}

} // namespace cvm::compat
