// Merging folders into a ;-separated PATH value (user_path.h): the same on every OS, so Linux
// tests it too; writing it to the registry is windows/user_path.cpp.
#include "platform/user_path.h"

#include <stdexcept>

#include "platform/platform.h"

namespace cvm::platform {

namespace {

std::string folder_key(std::string dir) {
    while (dir.size() > 1 && (dir.back() == '\\' || dir.back() == '/')) dir.pop_back();
    for (auto& c : dir) {
        if (c == '/') c = '\\';
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    }
    return dir;
}

} // namespace

std::optional<std::string> user_path_with(const std::string& current, const std::vector<std::string>& dirs) {
    std::vector<std::string> have;
    size_t start = 0;
    while (start <= current.size()) {
        size_t end = current.find(';', start);
        if (end == std::string::npos) end = current.size();
        if (end > start) have.push_back(folder_key(current.substr(start, end - start)));
        start = end + 1;
    }
    std::string out = current;
    bool changed = false;
    for (const auto& d : dirs) {
        if (d.empty()) continue;
        std::string key = folder_key(d);
        bool present = false;
        for (const auto& h : have) present = present || h == key;
        if (present) continue;
        have.push_back(key);
        if (!out.empty() && out.back() != ';') out.push_back(';');
        out += d;
        changed = true;
    }
    if (!changed) return std::nullopt;
    return out;
}

} // namespace cvm::platform
