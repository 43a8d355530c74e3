#include "store/assemble.h"

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

bool is_packaging_file(const std::string& name) {
    return name == "__init__.py" || name == "__pycache__";
}

void plan_tree(std::vector<RootLink>& plan, const std::string& rel_dir, const std::vector<fs::path>& src_dirs,
               const std::function<bool(const std::string&)>& keep) {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& d : src_dirs)
        for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec)) {
            std::string n = it->path().filename().u8string();
            if (!is_packaging_file(n) && keep(n) && std::find(names.begin(), names.end(), n) == names.end())
                names.push_back(n);
        }
    // Directory order differs between file systems; the plan should not.
    std::sort(names.begin(), names.end());
    for (const auto& n : names) {
        const std::string rel = rel_dir.empty() ? n : rel_dir + "/" + n;
        if (planned(plan, rel)) continue;
        std::vector<fs::path> holders, folders;
        for (const auto& d : src_dirs) {
            fs::path p = d / fs::u8path(n);
            if (!fs::exists(fs::symlink_status(p, ec))) continue;
            holders.push_back(p);
            if (fs::is_directory(p, ec)) folders.push_back(d / fs::u8path(n));
        }
        if (holders.empty()) continue;
        if (folders.size() > 1 && folders.size() == holders.size())
            plan_tree(plan, rel, folders, [](const std::string&) { return true; });
        else
            plan.push_back({rel, holders.front()});
    }
}

static bool lies_within(const fs::path& p, const fs::path& top) {
    auto rel = p.lexically_relative(top);
    return !rel.empty() && *rel.begin() != "..";
}

std::optional<std::string> tree_problem(const fs::path& dir, const fs::path& source) {
    std::error_code ec;
    const fs::path top = fs::weakly_canonical(source, ec);
    if (ec) return source.u8string() + " cannot be read (" + ec.message() + ")";
    if (fs::is_symlink(fs::symlink_status(dir, ec))) {
        fs::path target = fs::canonical(dir, ec);
        if (ec || !lies_within(target, top))
            return "the folder " + dir.u8string() + " is a link out of " + source.u8string() +
                   (ec ? std::string() : " (to " + target.u8string() + ")");
    }
    std::vector<fs::path> todo{dir};
    while (!todo.empty()) {
        fs::path d = todo.back();
        todo.pop_back();
        fs::directory_iterator it(d, ec);
        if (ec) return "the folder " + d.u8string() + " cannot be read (" + ec.message() + ")";
        for (fs::directory_iterator end; it != end; it.increment(ec)) {
            const fs::path p = it->path();
            auto st = fs::symlink_status(p, ec);
            if (ec) return p.u8string() + " cannot be read (" + ec.message() + ")";
            if (fs::is_symlink(st)) {
                if (!fs::is_directory(p, ec)) continue; // a link to a file: the loader's own kind
                fs::path target = fs::canonical(p, ec);
                if (ec || !lies_within(target, top))
                    return "the folder " + p.u8string() + " is a link out of " + source.u8string() +
                           (ec ? std::string() : " (to " + target.u8string() + ")");
                continue;
            }
            if (fs::is_directory(st)) todo.push_back(p);
        }
        if (ec) return "the folder " + d.u8string() + " cannot be read (" + ec.message() + ")";
    }
    return std::nullopt;
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
