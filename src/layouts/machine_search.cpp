#include "layouts/machine_search.h"

#include <algorithm>
#include <system_error>

#include "layouts/cudnn_layouts.h"
#include "layouts/nccl_layouts.h"
#include "config/program_trust.h"

namespace cvm {

namespace {

struct Collector {
    std::vector<DiscoveredFolder> out;
    std::vector<fs::path> canonical;
    void add(const fs::path& dir, const std::string& found) {
        std::error_code ec;
        auto st = fs::status(dir, ec);
        // A folder that cannot be looked at is still a candidate: its import then says why.
        bool unreadable = ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory;
        // A relative folder (CUDA_PATH=., a line of environments.txt) would be the current one.
        if (dir.empty() || dir.is_relative() || (!unreadable && !fs::is_directory(st))) return;
        fs::path c = fs::canonical(dir, ec);
        if (ec) c = dir;
        for (size_t i = 0; i < canonical.size(); ++i)
            if (canonical[i] == c) {
                // One folder found two ways (Debian's toolkit and NVIDIA's cuDNN in /usr).
                if (out[i].found.find(found) == std::string::npos) out[i].found += "; " + found;
                return;
            }
        canonical.push_back(c);
        out.push_back({dir, found});
    }
};

std::string env_of(const DiscoverInputs& in, const std::string& name) {
    for (const auto& [k, v] : in.env)
        if (platform::env_name_equal(k, name)) return v;
    return {};
}

} // namespace

bool assembled_from_wheels(const fs::path& dir) {
    std::error_code ec;
    for (fs::directory_iterator it(dir / "dist-info", ec), end; !ec && it != end;
         it.increment(ec)) {
        std::string name = it->path().filename().u8string();
        if (name.rfind("nvidia_", 0) == 0 && name.size() > 10 &&
            name.compare(name.size() - 10, 10, ".dist-info") == 0)
            return true;
    }
    return false;
}

std::vector<fs::path> python_site_packages(const std::string& python, int timeout_ms) {
    if (python.empty()) return {};
    auto out = platform::capture_python(
        python,
        "import sysconfig; p = sysconfig.get_paths(); print(p['purelib']); print(p['platlib'])",
        timeout_ms);
    std::vector<fs::path> dirs;
    if (!out) return dirs;
    std::string_view rest(*out);
    while (!rest.empty()) {
        size_t nl = rest.find('\n');
        std::string_view line = rest.substr(0, nl);
        rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
        if (line.empty()) continue;
        fs::path p = fs::u8path(line);
        if (p.is_absolute() && std::find(dirs.begin(), dirs.end(), p) == dirs.end()) dirs.push_back(p);
    }
    return dirs;
}

DiscoverInputs discover_inputs_from_environment() {
    DiscoverInputs in;
    if (auto r = platform::get_env("CVM_DETECT_ROOT"); r && !r->empty()) in.root = fs::u8path(*r);
    in.env = platform::environment();
    in.home = platform::home_dir_if_any().value_or(fs::path());
    const bool win = in.os == platform::Os::Windows;
    if (auto p = platform::get_env("CVM_PYTHON")) {
        in.python = *p; // empty: no python at all
    } else if (auto venv = platform::get_env("VIRTUAL_ENV"); venv && !venv->empty()) {
        fs::path py = fs::u8path(*venv) / (win ? "Scripts/python.exe" : "bin/python");
        if (platform::is_executable(py) && trusted_program(py, "the virtual environment's python"))
            in.python = py.u8string();
    }
    if (in.python.empty() && !platform::get_env("CVM_PYTHON")) {
        auto path = platform::get_env("PATH");
        fs::path found =
            find_trusted_program(win ? "python" : "python3", path ? *path : std::string());
        in.python = found.u8string();
    }
    return in;
}

std::vector<DiscoveredFolder> discover_folders(const DiscoverInputs& in) {
    Collector c;
    const bool win = in.os == platform::Os::Windows;
    // What NVIDIA's installers leave: CUDA_PATH_Vx_y, the default folders, CUDA_PATH.
    std::vector<std::pair<std::string, std::string>> versioned;
    for (const auto& [name, value] : in.env) {
        std::string upper = name;
        for (auto& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        if (upper.rfind("CUDA_PATH_V", 0) == 0 && !value.empty()) versioned.emplace_back(name, value);
    }
    std::sort(versioned.begin(), versioned.end());
    for (const auto& [name, value] : versioned) c.add(fs::u8path(value), name);
    std::vector<std::pair<fs::path, std::string>> roots;
    if (win) {
        for (const char* var : {"ProgramFiles", "ProgramW6432"})
            if (auto pf = env_of(in, var); !pf.empty())
                roots.emplace_back(fs::u8path(pf) / "NVIDIA GPU Computing Toolkit" / "CUDA", "NVIDIA's installer");
    } else {
        roots = {{in.root / "usr" / "local", "NVIDIA's installer"}, {in.root / "opt", "installed in /opt"}};
    }
    for (const auto& [root, why] : roots) {
        std::error_code ec;
        std::vector<fs::path> found;
        for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
            std::string n = it->path().filename().u8string();
            bool match = win ? (n.size() > 1 && (n[0] == 'v' || n[0] == 'V')) : n.rfind("cuda-", 0) == 0;
            if (match) found.push_back(it->path());
        }
        std::sort(found.begin(), found.end());
        for (const auto& f : found)
            c.add(f, assembled_from_wheels(f) ? "NVIDIA's wheels, their dist-info/ in the folder"
                                              : why);
    }
    if (auto cp = env_of(in, "CUDA_PATH"); !cp.empty()) c.add(fs::u8path(cp), "CUDA_PATH");
    if (!win) {
        fs::path usr = in.root / "usr";
        std::error_code ec;
        if (fs::exists(usr / "lib" / "nvidia-cuda-toolkit" / "bin" / "nvcc", ec))
            c.add(usr, "Debian package nvidia-cuda-toolkit");
        if (has_system_cudnn(usr)) c.add(usr, "NVIDIA's cuDNN packages");
        if (has_system_nccl(usr)) c.add(usr, "NVIDIA's NCCL packages");
    }
    // conda environments: the active one, and every one conda has made for this user.
    if (auto prefix = env_of(in, "CONDA_PREFIX"); !prefix.empty())
        c.add(fs::u8path(prefix), "conda environment $CONDA_PREFIX");
    if (!in.home.empty()) {
        // One folder per line (a FIFO or a folder of that name reads as absent).
        std::string text = platform::read_file(in.home / ".conda" / "environments.txt").value_or("");
        for (size_t start = 0; start < text.size();) {
            size_t end = text.find('\n', start);
            if (end == std::string::npos) end = text.size();
            std::string line = text.substr(start, end - start);
            start = end + 1;
            if (!line.empty() && line.back() == '\r') line.pop_back();
            if (line.empty() || line[0] == '#') continue;
            c.add(fs::u8path(line), "conda environment in ~/.conda/environments.txt");
        }
    }
    // pip's nvidia-* wheels of the user's python.
    if (!in.python.empty() && in.site_packages) {
        for (const auto& site : in.site_packages(in.python)) {
            c.add(site / "nvidia", "pip wheels of " + in.python);
            c.add(site / "nvidia" / "cudnn", "pip wheel of " + in.python);
            c.add(site / "nvidia" / "nccl", "pip wheel of " + in.python);
        }
    }
    return c.out;
}

} // namespace cvm
