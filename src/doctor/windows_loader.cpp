#include "windows_loader.h"

#include "binary/pe_reader.h"
#include "text/ascii.h"

#include <map>
#include <set>

namespace cvm::doctor {

const char* to_string(WindowsSearchMode m) {
    switch (m) {
    case WindowsSearchMode::standard:
        return "standard";
    case WindowsSearchMode::standard_unsafe:
        return "standard (SafeDllSearchMode off)";
    case WindowsSearchMode::python_extension:
        return "Python 3.8+ extension module";
    }
    return "?";
}

const char* to_string(WindowsMechanism m) {
    switch (m) {
    case WindowsMechanism::direct_path:
        return "path";
    case WindowsMechanism::dll_load_dir:
        return "module folder";
    case WindowsMechanism::application_dir:
        return "application folder";
    case WindowsMechanism::system32:
        return "System32";
    case WindowsMechanism::system16:
        return "16-bit system folder";
    case WindowsMechanism::windows_dir:
        return "Windows folder";
    case WindowsMechanism::current_dir:
        return "current folder";
    case WindowsMechanism::path_env:
        return "PATH";
    case WindowsMechanism::user_dir:
        return "os.add_dll_directory";
    }
    return "?";
}

std::vector<const WindowsCandidate*> WindowsSearchResult::shadowed() const {
    std::vector<const WindowsCandidate*> out;
    for (const auto& c : candidates)
        if (c.status == CandidateStatus::shadowed) out.push_back(&c);
    return out;
}

bool iequals(const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

std::vector<std::string> split_windows_path(const std::string& value) {
    std::vector<std::string> out;
    std::string current;
    bool quoted = false;
    auto flush = [&] {
        if (!current.empty()) out.push_back(current);
        current.clear();
    };
    for (char c : value) {
        if (c == '"') {
            quoted = !quoted;
        } else if (c == ';' && !quoted) {
            flush();
        } else {
            current.push_back(c);
        }
    }
    flush();
    return out;
}

namespace {

class WindowsSearch {
public:
    WindowsSearch(const std::string& name, const WindowsSearchConfig& config,
                  const FileSystemView& fs)
        : name_(name), config_(config), fs_(fs) {
        result_.name = name;
        result_.mode = config.mode;
    }

    WindowsSearchResult run() {
        if (name_.find('/') != std::string::npos || name_.find('\\') != std::string::npos) {
            add_file(path_dirname(name_), path_basename(name_), WindowsMechanism::direct_path,
                     "the name is a path");
            return std::move(result_);
        }
        switch (config_.mode) {
        case WindowsSearchMode::standard:
        case WindowsSearchMode::standard_unsafe: {
            const bool unsafe = config_.mode == WindowsSearchMode::standard_unsafe;
            add(config_.application_dir, WindowsMechanism::application_dir, "application folder");
            if (unsafe) add(config_.current_dir, WindowsMechanism::current_dir, "current folder");
            add(config_.system32_dir, WindowsMechanism::system32, "System32");
            add(config_.system16_dir, WindowsMechanism::system16, "16-bit system folder");
            add(config_.windows_dir, WindowsMechanism::windows_dir, "Windows folder");
            if (!unsafe) add(config_.current_dir, WindowsMechanism::current_dir, "current folder");
            if (config_.path) {
                int index = 0;
                for (const auto& dir : split_windows_path(*config_.path))
                    add(dir, WindowsMechanism::path_env, "PATH entry " + std::to_string(++index));
            }
            break;
        }
        case WindowsSearchMode::python_extension:
            add(config_.loading_module_dir, WindowsMechanism::dll_load_dir,
                "folder of the extension module");
            add(config_.application_dir, WindowsMechanism::application_dir, "application folder");
            for (const auto& dir : config_.dll_directories)
                add(dir, WindowsMechanism::user_dir, "os.add_dll_directory");
            add(config_.system32_dir, WindowsMechanism::system32, "System32");
            break;
        }
        return std::move(result_);
    }

private:
    void add(const std::string& dir, WindowsMechanism mechanism, const std::string& origin) {
        if (dir.empty()) return;
        // Find the name as spelled on disk: the comparison is case-insensitive.
        std::string spelled = name_;
        bool found = false;
        if (fs_.is_directory(dir)) {
            for (const auto& entry : listing(dir)) {
                if (iequals(entry, name_)) {
                    spelled = entry;
                    found = true;
                    break;
                }
            }
        }
        add_file(dir, found ? spelled : name_, mechanism, origin, found);
    }

    const std::vector<std::string>& listing(const std::string& dir) {
        auto it = listings_.find(ascii_lower(dir));
        if (it == listings_.end()) it = listings_.emplace(ascii_lower(dir), fs_.list(dir)).first;
        return it->second;
    }

    void add_file(const std::string& dir, const std::string& file, WindowsMechanism mechanism,
                  const std::string& origin, std::optional<bool> known_found = std::nullopt) {
        const std::string path = path_join(dir, file);
        if (!seen_.insert(ascii_lower(path)).second) return;
        WindowsCandidate c;
        c.path = path;
        c.mechanism = mechanism;
        c.origin = origin;
        const bool exists = known_found ? *known_found && fs_.is_file(path) : fs_.is_file(path);
        const bool decided = result_.winner || result_.failed_at;
        if (!exists) {
            c.status = CandidateStatus::not_found;
        } else {
            bool loadable = true;
            if (auto src = fs_.open(path)) {
                auto pe = binary::read_pe(*src);
                if (!pe) {
                    loadable = false;
                    c.detail = pe.error;
                } else if (config_.machine != 0 && pe.info->machine != config_.machine) {
                    loadable = false;
                    c.detail = "built for " + pe.info->machine_name() + ", the process is " +
                               binary::pe_machine_name(config_.machine);
                }
            } else {
                loadable = false;
                c.detail = "cannot be opened";
            }
            if (decided) {
                c.status = loadable ? CandidateStatus::shadowed : CandidateStatus::incompatible;
            } else if (loadable) {
                c.status = CandidateStatus::selected;
                result_.winner = result_.candidates.size();
            } else {
                // Windows does not search on past a bad image: LoadLibrary fails with error 193.
                c.status = CandidateStatus::unreadable;
                result_.failed_at = result_.candidates.size();
            }
        }
        result_.candidates.push_back(std::move(c));
    }

    const std::string& name_;
    const WindowsSearchConfig& config_;
    const FileSystemView& fs_;
    WindowsSearchResult result_;
    std::set<std::string> seen_;
    std::map<std::string, std::vector<std::string>> listings_;
};

} // namespace

WindowsSearchResult search_windows_dll(const std::string& name, const WindowsSearchConfig& config,
                                       const FileSystemView& fs) {
    return WindowsSearch(name, config, fs).run();
}

} // namespace cvm::doctor
