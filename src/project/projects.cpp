#include "project/projects.h"

#include <algorithm>
#include <string>

#include "platform/platform.h"

namespace cvm {

namespace {

constexpr std::size_t kListLimit = std::size_t(4) << 20;

std::vector<std::string> recorded(const Store& store) {
    std::vector<std::string> out;
    auto text = platform::read_file(projects_file(store), kListLimit);
    if (!text) return out;
    size_t pos = 0;
    while (pos < text->size()) {
        size_t end = text->find('\n', pos);
        if (end == std::string::npos) end = text->size();
        std::string line = text->substr(pos, end - pos);
        pos = end + 1;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty() && std::find(out.begin(), out.end(), line) == out.end()) out.push_back(line);
    }
    return out;
}

// Rewrites the list as `change` makes it from the current lines, under a lock so that two cvm
// processes never drop each other's lines. Best effort: a store that cannot be written keeps
// its old list; nothing depends on this one write.
template <typename F> void update(const Store& store, F&& change) {
    try {
        std::error_code ec;
        fs::create_directories(store.locks_dir(), ec);
        platform::FileLock lock;
        lock.acquire(store.locks_dir() / "projects.lock");
        auto lines = recorded(store);
        if (!change(lines)) return;
        std::string text;
        for (const auto& l : lines) text += l + "\n";
        platform::write_file_atomically(projects_file(store), text);
    } catch (const std::exception&) {
    }
}

} // namespace

fs::path projects_file(const Store& store) { return store.root() / "projects"; }

void remember_project(const Store& store, const fs::path& version_file) {
    std::error_code ec;
    fs::path file = fs::absolute(version_file, ec).lexically_normal();
    if (ec) return;
    std::string line = file.u8string();
    if (line.find('\n') != std::string::npos || line.find('\r') != std::string::npos) return;
    update(store, [&](std::vector<std::string>& lines) {
        if (std::find(lines.begin(), lines.end(), line) != lines.end()) return false;
        lines.push_back(line);
        return true;
    });
}

std::vector<Selection> project_selections(const Store& store) {
    std::vector<Selection> out;
    auto lines = recorded(store);
    std::vector<std::string> dropped;
    for (const auto& line : lines) {
        try {
            auto sel = read_version_file(fs::u8path(line), Selection::Origin::ProjectFile);
            if (sel) {
                out.push_back(*sel);
                continue;
            }
        } catch (const SelectionError&) {
            // A broken file selects nothing: forget it.
        }
        dropped.push_back(line);
    }
    if (dropped.empty()) return out;
    update(store, [&](std::vector<std::string>& now) {
        auto gone = [&](const std::string& l) { return std::find(dropped.begin(), dropped.end(), l) != dropped.end(); };
        now.erase(std::remove_if(now.begin(), now.end(), gone), now.end());
        return true;
    });
    return out;
}

} // namespace cvm
