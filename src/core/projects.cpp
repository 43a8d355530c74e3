#include "core/projects.h"

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

void save(const Store& store, const std::vector<std::string>& lines) {
    std::string text;
    for (const auto& l : lines) text += l + "\n";
    try {
        std::error_code ec;
        fs::create_directories(store.root(), ec);
        platform::write_file_atomically(projects_file(store), text);
    } catch (const std::exception&) {
        // A read-only store keeps its old list; nothing depends on this one write.
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
    auto lines = recorded(store);
    if (std::find(lines.begin(), lines.end(), line) != lines.end()) return;
    lines.push_back(line);
    save(store, lines);
}

std::vector<Selection> project_selections(const Store& store) {
    std::vector<Selection> out;
    auto lines = recorded(store);
    std::vector<std::string> kept;
    for (const auto& line : lines) {
        try {
            auto sel = read_version_file(fs::u8path(line), Selection::Origin::ProjectFile);
            if (!sel) continue;
            out.push_back(*sel);
            kept.push_back(line);
        } catch (const SelectionError&) {
            // A broken file selects nothing: forget it.
        }
    }
    if (kept.size() != lines.size()) save(store, kept);
    return out;
}

} // namespace cvm
