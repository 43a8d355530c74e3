#include "activation/launch_plan.h"

#include <algorithm>

#include "text/ascii.h"
#include "store/entry_trust.h"
#include "activation/shims.h"
#include "activation/view.h"

namespace cvm {

namespace {

LaunchPlan fall_through_plan(std::string missing) {
    LaunchPlan p;
    p.kind = LaunchPlan::Kind::System;
    p.message = std::move(missing);
    return p;
}

LaunchPlan refusal(std::string line, int code = 127) {
    LaunchPlan p;
    p.kind = LaunchPlan::Kind::Refuse;
    p.message = std::move(line);
    p.exit_code = code;
    return p;
}

std::string id_list(const std::vector<std::string>& ids) {
    std::string out;
    for (size_t i = 0; i < ids.size(); ++i)
        out += (i ? ", " : "") + ids[i];
    return out;
}

} // namespace

ToolName tool_name(const std::string& typed, platform::Os os) {
    ToolName t;
    t.file = fs::u8path(typed).filename().u8string();
    if (os == platform::Os::Windows) {
        t.file = ascii_lower(t.file);
        if (t.file.size() < 4 || t.file.compare(t.file.size() - 4, 4, ".exe") != 0) t.file += ".exe";
        t.shown = t.file.substr(0, t.file.size() - 4);
    } else {
        t.shown = t.file;
    }
    return t;
}

fs::path find_tool(const std::vector<fs::path>& dirs, const std::string& tool,
                   const std::optional<platform::FileId>& launcher, platform::FileMeta& meta,
                   size_t* index) {
    for (size_t i = 0; i < dirs.size(); ++i) {
        fs::path candidate = dirs[i] / fs::u8path(tool);
        auto id = platform::executable_id(candidate, &meta);
        if (id && (!launcher || *id != *launcher)) {
            if (index) *index = i;
            return candidate;
        }
    }
    return {};
}

LaunchPlan plan_launch(const std::string& tool, const std::string& shown, const Selection& sel,
                       const std::function<const Store&()>& store,
                       const std::optional<platform::FileId>& launcher) {
    // A stale shim of a compiler or a shell stands for the machine's own program.
    if (is_host_program(shown))
        return fall_through_plan(shown + " is not on PATH outside cvm's shims; run `cvm rehash` to "
                                         "remove its stale shim");
    if (sel.origin == Selection::Origin::None)
        return fall_through_plan("no CUDA version is selected here and " + shown +
                                 " is not on PATH outside cvm's shims; run `cvm use SPEC` (or `cvm use "
                                 "--global SPEC`), see `cvm list`");
    if (sel.spec.system)
        return fall_through_plan(shown + " is not installed outside cvm ('system' is selected by " +
                                 sel.origin_text() + "); run `cvm use SPEC` to pick a toolkit");
    const Store& s = store();
    LaunchPlan plan;
    try {
        plan.resolved = resolve(s, sel.spec);
    } catch (const ResolveError& e) {
        LaunchPlan refused = refusal(sel.not_installed_text(e.what()));
        refused.error_code = "not_installed";
        return refused;
    }
    const Resolved& r = *plan.resolved;
    // The view's name is known before it exists (the caller makes it once the program is found),
    // so the layout is computed once.
    plan.layout = selection_layout(s, r);
    platform::FileMeta meta;
    size_t found_in = 0;
    plan.program = find_tool(plan.layout.tool_dirs, tool, launcher, meta, &found_in);
    if (plan.program.empty()) {
        // Only on this path are the other toolkits' entries read.
        auto others = toolkits_with(s, tool);
        // The selection's own toolkit holds it only as the launcher itself (a link to the shim).
        others.erase(std::remove(others.begin(), others.end(), r.toolkit.id), others.end());
        if (!others.empty())
            return refusal(shown + " is not part of CUDA " + r.toolkit.id + " (selected by " +
                           sel.origin_text() + ") but of CUDA " + id_list(others) +
                           "; run `cvm use SPEC` to select one of them");
        const auto& dirs = plan.layout.bin_dirs;
        return fall_through_plan(shown + " is not part of CUDA " + r.toolkit.id + " (selected by " +
                                 sel.origin_text() + ") nor on PATH outside cvm's shims; its tools are in " +
                                 (dirs.empty() ? r.toolkit.path : dirs.front()).u8string() +
                                 "; select another toolkit with `cvm use SPEC`");
    }
    // The program itself, not only its folders (resolve checked those): another user's file in a
    // folder of the entry is not run. Its stat is the one that found it.
    check_entry_file_trusted(r.toolkit, plan.program, &meta);
    plan.kind = LaunchPlan::Kind::Toolkit;
    plan.started_as = found_in < plan.layout.bin_dirs.size()
                          ? plan.layout.bin_dirs[found_in] / fs::u8path(tool)
                          : plan.program;
    return plan;
}

void check_selection_programs(const Resolved& r, const Layout& layout) {
    for (const auto& dir : layout.tool_dirs) {
        std::error_code ec;
        std::vector<fs::path> names;
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
            names.push_back(it->path().filename());
        // In name order, so the line names the same file each time.
        std::sort(names.begin(), names.end());
        for (const auto& name : names) {
            platform::FileMeta meta;
            if (platform::executable_id(dir / name, &meta))
                check_entry_file_trusted(r.toolkit, dir / name, &meta);
        }
    }
}

std::vector<EnvChange> selection_environment(const Store& store, const Resolved& r,
                                             const Layout& layout, const EnvLookup& current,
                                             platform::Os os, PathOrder order) {
    ensure_view(store, r, os);
    return compute_environment(layout, current, foreign_dirs_of(store), os, order);
}

} // namespace cvm
