#include "compat/cudnn_header.h"

#include <algorithm>
#include <filesystem>

#include "layouts/folder_facts.h"
#include "activation/environment.h"
#include "platform/platform.h"
#include "text/path_list.h"

namespace cvm::compat {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> env_of(const std::map<std::string, std::string>& env,
                                  const std::string& name) {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
}

// The release a cudnn.h's folder declares (cudnn_version.h beside it, NVIDIA's apt packages'
// cudnn_version_v9.h, or cudnn.h itself before cuDNN 8).
std::optional<Version> header_release(const fs::path& header) {
    const fs::path dir = header.parent_path();
    for (const char* name :
         {"cudnn_version.h", "cudnn_version_v9.h", "cudnn_version_v8.h", "cudnn.h"}) {
        if (auto text = platform::read_file(dir / name, 1 << 16))
            if (auto v = cudnn_version_from_header(*text)) return v;
    }
    return std::nullopt;
}

} // namespace

std::string cudnn_header_seen(const std::string& nvcc,
                              const std::map<std::string, std::string>& env) {
    std::vector<fs::path> dirs;
    if (!nvcc.empty()) {
        const fs::path top = fs::u8path(nvcc).parent_path() / "..";
        dirs.push_back(top / "targets" / "x86_64-linux" / "include");
        dirs.push_back(top / "include");
    }
    if (auto cpath = env_of(env, "CPATH"))
        for (const auto& d : split_path_list(*cpath, platform::Os::Linux))
            if (!d.empty()) dirs.push_back(fs::u8path(d));
    for (const char* d : {"/usr/local/include", "/usr/include/x86_64-linux-gnu", "/usr/include"})
        dirs.push_back(d);
    for (const auto& d : dirs) {
        fs::path h = d / "cudnn.h";
        std::error_code ec;
        if (fs::exists(h, ec)) return h.lexically_normal().u8string();
    }
    return {};
}

std::vector<doctor::Finding> cudnn_header_findings(const doctor::DoctorReport& report,
                                                   const std::map<std::string, std::string>& env,
                                                   const std::string& shims_dir) {
    std::vector<doctor::Finding> out;
    if (platform::host_os() != platform::Os::Linux || !report.resolved || !report.resolved->cudnn)
        return out;
    const Entry& dnn = *report.resolved->cudnn;
    // The nvcc a build started here runs: the first on PATH, as make and a shell find it.
    std::string nvcc;
    if (auto path = env_of(env, "PATH"))
        for (const auto& d : split_path_list(*path, platform::Os::Linux)) {
            if (d.empty()) continue;
            fs::path candidate = fs::u8path(d) / "nvcc";
            if (platform::is_executable(candidate)) {
                nvcc = candidate.u8string();
                break;
            }
        }
    if (!nvcc.empty() && fs::u8path(nvcc).parent_path() == fs::u8path(shims_dir))
        return out; // the shim's
    const std::string header = cudnn_header_seen(nvcc, env);
    const std::string want = dnn.version.str();
    if (header.empty()) {
        out.push_back({doctor::Severity::warning, "cudnn-header-elsewhere",
                       "a build started in this shell finds no cudnn.h (" +
                           (nvcc.empty() ? std::string("no nvcc on PATH") : "nvcc " + nvcc) +
                           "), though cuDNN " + want + " is selected",
                       "add `eval \"$(cvm init bash)\"` to ~/.bashrc (zsh and fish alike) so that "
                       "the shell follows "
                       "the folder, or start the build through `cvm exec --`"});
        return out;
    }
    auto seen = header_release(fs::u8path(header));
    if (!seen) return out;
    // 9.19.0 (the header) is 9.19.0.56 (the build's four numbers).
    auto first3 = [](const Version& v) {
        return std::vector<unsigned>(
            v.parts.begin(),
            v.parts.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(3, v.parts.size())));
    };
    if (first3(*seen) == first3(dnn.version)) return out;
    out.push_back({doctor::Severity::warning, "cudnn-header-elsewhere",
                   "a build started in this shell compiles against " + header + " (cuDNN " +
                       seen->str() + "), not the selected cuDNN " + want +
                       "'s: the program then loads one cuDNN and was compiled for another",
                   "add `eval \"$(cvm init bash)\"` to ~/.bashrc (zsh and fish alike) so that the "
                   "shell follows the "
                   "folder, or start the build through `cvm exec --`"});
    return out;
}

} // namespace cvm::compat
