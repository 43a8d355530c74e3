#include "core/assemble.h"

#include <algorithm>
#include <stdexcept>
#include <system_error>

#include "platform/platform.h"

namespace cvm {

static bool planned(const std::vector<RootLink>& plan, const std::string& rel) {
    return std::any_of(plan.begin(), plan.end(), [&](const RootLink& l) { return l.rel == rel; });
}

void plan_link(std::vector<RootLink>& plan, const std::string& rel, const fs::path& target) {
    std::error_code ec;
    if (!fs::exists(target, ec) || planned(plan, rel)) return;
    plan.push_back({rel, target});
}

size_t plan_files(std::vector<RootLink>& plan, const std::string& rel_dir, const fs::path& src_dir,
                  const std::function<bool(const std::string&)>& keep) {
    std::vector<fs::path> found;
    std::error_code ec;
    for (fs::directory_iterator it(src_dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().u8string();
        if (keep(name)) found.push_back(it->path());
    }
    // Directory order differs between file systems; the plan should not.
    std::sort(found.begin(), found.end());
    size_t added = 0;
    for (const auto& p : found) {
        std::string rel = rel_dir + "/" + p.filename().u8string();
        if (planned(plan, rel)) continue;
        plan.push_back({rel, p});
        ++added;
    }
    return added;
}

void build_assembled_root(const fs::path& stage, const std::vector<RootLink>& plan) {
    fs::create_directories(stage);
    for (const auto& link : plan) {
        fs::path at = stage / fs::u8path(link.rel);
        fs::create_directories(at.parent_path());
        std::error_code ec;
        bool dir = fs::is_directory(link.target, ec);
        platform::make_link(link.target, at, dir);
    }
}

} // namespace cvm
