// Finding programs on a PATH-style list and running python isolated (platform.h): the same on
// every OS, over is_executable and capture_output.
#include "platform/platform.h"

namespace cvm::platform {

static fs::path find_in(const std::string& name, const std::string& path_list, bool absolute_only) {
    fs::path given = fs::u8path(name);
    std::vector<std::string> suffixes{""};
    if (host_os() == Os::Windows) {
        std::string pathext = get_env("PATHEXT").value_or(".COM;.EXE;.BAT;.CMD");
        size_t start = 0;
        while (start < pathext.size()) {
            size_t end = pathext.find(';', start);
            if (end == std::string::npos) end = pathext.size();
            if (end > start) suffixes.push_back(pathext.substr(start, end - start));
            start = end + 1;
        }
    }
    auto try_path = [&](const fs::path& base) -> fs::path {
        for (const auto& suffix : suffixes) {
            fs::path candidate = base;
            candidate += fs::u8path(suffix);
            if (is_executable(candidate)) return candidate;
        }
        return {};
    };
    if (given.has_parent_path()) return try_path(given);
    size_t start = 0;
    char sep = path_list_separator();
    while (start <= path_list.size()) {
        size_t end = path_list.find(sep, start);
        if (end == std::string::npos) end = path_list.size();
        std::string dir = path_list.substr(start, end - start);
        start = end + 1;
        if (dir.empty() || (absolute_only && fs::u8path(dir).is_relative())) continue;
        if (auto found = try_path(fs::u8path(dir) / given); !found.empty()) return found;
    }
    return {};
}

fs::path find_executable(const std::string& name, const std::string& path_list) {
    return find_in(name, path_list, false);
}

fs::path find_program(const std::string& name, const std::string& path_list) {
    return find_in(name, path_list, true);
}

std::string signal_name(int signal) {
    // The numbers are Linux's (x86 and ARM alike): the only system whose Captured says Signaled.
    switch (signal) {
    case 4: return "SIGILL";
    case 6: return "SIGABRT";
    case 7: return "SIGBUS";
    case 8: return "SIGFPE";
    case 9: return "SIGKILL";
    case 11: return "SIGSEGV";
    case 15: return "SIGTERM";
    default: return "signal " + std::to_string(signal);
    }
}

std::optional<std::string> capture_python(const std::string& python, const std::string& program,
                                          int timeout_ms) {
    if (python.empty()) return std::nullopt;
    // -I: no current folder or script folder on sys.path, no PYTHON* variables, no user site.
    return capture_output(fs::u8path(python), {python, "-I", "-c", program}, timeout_ms);
}

} // namespace cvm::platform
