#include "file_system_view.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace cvm::doctor {

namespace fs = std::filesystem;

bool RealFileSystem::is_file(const std::string& path) const {
    std::error_code ec;
    return !path.empty() && fs::is_regular_file(fs::u8path(path), ec);
}

bool RealFileSystem::is_directory(const std::string& path) const {
    std::error_code ec;
    return !path.empty() && fs::is_directory(fs::u8path(path), ec);
}

std::optional<std::string> RealFileSystem::real_path(const std::string& path) const {
    std::error_code ec;
    if (path.empty()) return std::nullopt;
    auto p = fs::canonical(fs::u8path(path), ec);
    if (ec) return std::nullopt;
    return p.u8string();
}

std::vector<std::string> RealFileSystem::list(const std::string& dir) const {
    std::vector<std::string> out;
    std::error_code ec;
    if (dir.empty()) return out;
    fs::directory_iterator it(fs::u8path(dir), ec), end;
    for (; !ec && it != end; it.increment(ec))
        out.push_back(it->path().filename().u8string());
    return out;
}

std::unique_ptr<binary::ByteSource> RealFileSystem::open(const std::string& path) const {
    return binary::FileSource::open(path);
}

namespace {
bool is_separator(char c) {
    return c == '/' || c == '\\';
}
} // namespace

std::string text_of(const FileSystemView& fs, const std::string& path) {
    auto src = fs.open(path);
    if (!src) return {};
    auto bytes = src->read_up_to(0, 1 << 20);
    if (!bytes) return {};
    return std::string(bytes->begin(), bytes->end());
}

std::optional<std::string> installed_dist_version(const FileSystemView& fs, const std::string& site,
                                                  std::string_view prefix) {
    std::vector<std::string> names = fs.list(site);
    std::sort(names.begin(), names.end());
    for (const auto& n : names) {
        const std::string_view tail = ".dist-info";
        if (n.compare(0, prefix.size(), prefix) != 0 || n.size() < tail.size() ||
            n.compare(n.size() - tail.size(), tail.size(), tail) != 0)
            continue;
        const auto dash = n.find('-');
        if (dash == std::string::npos) continue;
        return n.substr(dash + 1, n.size() - dash - 1 - tail.size());
    }
    return std::nullopt;
}

std::string path_normal(const std::string& path) {
    std::string s = fs::path(path).lexically_normal().generic_string();
    while (s.size() > 1 && s.back() == '/')
        s.pop_back();
    return s;
}

std::string path_join(const std::string& dir, const std::string& name) {
    if (dir.empty()) return name;
    if (is_separator(dir.back())) return dir + name;
    // Keep the folder's own style: a Windows folder text gets a backslash.
    const bool windows = dir.find('\\') != std::string::npos ||
                         (dir.size() >= 2 && dir[1] == ':' && dir.find('/') == std::string::npos);
    return dir + (windows ? '\\' : '/') + name;
}

std::string path_dirname(const std::string& path) {
    std::size_t end = path.size();
    while (end > 1 && is_separator(path[end - 1]))
        --end;
    std::size_t cut = end;
    while (cut > 0 && !is_separator(path[cut - 1]))
        --cut;
    if (cut == 0) return ".";
    std::size_t dir_end = cut - 1;
    while (dir_end > 0 && is_separator(path[dir_end - 1]))
        --dir_end;
    if (dir_end == 0) return path.substr(0, 1);                   // the root
    if (dir_end == 2 && path[1] == ':') return path.substr(0, 3); // "C:\"
    return path.substr(0, dir_end);
}

std::string path_basename(const std::string& path) {
    std::size_t end = path.size();
    while (end > 0 && is_separator(path[end - 1]))
        --end;
    std::size_t start = end;
    while (start > 0 && !is_separator(path[start - 1]))
        --start;
    return path.substr(start, end - start);
}

} // namespace cvm::doctor
