#include "compat/auto_host_compiler.h"

#include <system_error>

#include "compat/visual_studio.h"
#include "registry/registry.h"

namespace cvm::compat {

namespace fs = std::filesystem;

namespace {

fs::path nvcc_of(const Entry& toolkit) {
    const char* name = platform::host_os() == platform::Os::Windows ? "nvcc.exe" : "nvcc";
    std::vector<std::string> bins = toolkit.bin_dirs.empty() ? std::vector<std::string>{"bin"} : toolkit.bin_dirs;
    for (const auto& b : bins) {
        fs::path p = toolkit.path / fs::u8path(b) / name;
        if (platform::exists(p.u8string())) return p;
    }
    return toolkit.path / "bin" / name;
}

void write_choice(const fs::path& file, const std::optional<HostCompilerChoice>& choice) {
    std::error_code ec;
    if (!choice) {
        fs::remove(file, ec);
        return;
    }
    fs::create_directories(file.parent_path(), ec);
    try { // replaced only when whole: a failed write leaves the old answer, never half of one
        platform::write_file_atomically(file, format_host_compiler_choice(*choice));
    } catch (const std::exception&) {
        // a kept answer is a cache: without it the choice is made again next time
    }
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
    std::string current = platform::get_env("CVM_COMPILER_PATH").value_or(platform::get_env("PATH").value_or(""));
    size_t pos = 0;
    while (pos <= current.size()) {
        size_t end = current.find(sep, pos);
        std::string dir = current.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
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

std::string host_compiler_fix(const HostCompilerLimits& l, platform::Os os) {
    if (os == platform::Os::Windows) {
        if (!l.msc_max) return "install a Visual Studio that CUDA " + l.cuda.str() + " supports";
        // _MSC_VER 19xx is the MSVC toolset 14.xx.
        return "install the MSVC v14." + std::to_string(*l.msc_max % 100) +
               " build tools (Visual Studio Installer, Individual components) or another "
               "compiler CUDA " + l.cuda.str() + " supports (" + l.describe(true) + ")";
    }
    std::string out = "install a supported compiler";
    if (l.gcc_max) out += ", e.g. g++-" + std::to_string(*l.gcc_max) + " (apt install g++-" + std::to_string(*l.gcc_max) + ")";
    if (l.clang_max) out += std::string(l.gcc_max ? " or" : ", e.g.") + " clang-" + std::to_string(*l.clang_max);
    return out + ", or run nvcc with -ccbin naming one";
}

std::string host_compiler_line(const HostCompilerStatus& s) {
    if (s.problem.empty() || !s.limits) return {};
    if (s.choice)
        return "host compiler: " + s.choice->ccbin + " is handed to nvcc" +
               (s.choice->via_env ? " (NVCC_CCBIN, CUDAHOSTCXX)" : " (-ccbin, CUDAHOSTCXX)") + ": " + s.problem;
    if (!s.nvcc_default.chosen_by_nvcc()) return "warning: " + s.problem + "; change " + s.nvcc_default.origin;
    return "warning: " + s.problem + "; no installed compiler fits: " + host_compiler_fix(*s.limits, platform::host_os());
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
            if (auto kept = parse_host_compiler_choice(*text)) return kept;
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
        if (!file.empty()) write_choice(file, std::nullopt);
        return s;
    }
    auto limits = toolkit_limits(toolkit);
    s = host_compiler_status(toolkit_query(store, toolkit), limits ? &*limits : nullptr);
    // Reading nvcc (megabytes) only when there is something to hand over.
    if (s.choice) s.choice->via_env = nvcc_honours_ccbin_env(toolkit);
    if (!file.empty()) {
        HostCompilerChoice kept = s.choice.value_or(HostCompilerChoice{});
        kept.line = host_compiler_line(s);
        write_choice(file, kept);
    }
    if (s.choice) s.choice->line = host_compiler_line(s);
    return s;
}

} // namespace cvm::compat
