#pragma once
// Which program a tool name runs, and how: the one place that decides it. The shim runs the plan
// (shims/shim.cpp), `cvm which` prints it (cli/which.cpp); both take the same branch, in the same
// order, with the same line, for each case: a host program's stale shim, nothing selected,
// `system`, a selection not installed, a tool the toolkit lacks (another toolkit's, or none's),
// the shim itself first on PATH, a program another user could change (TrustError).
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "activation/environment.h"
#include "store/resolve.h"
#include "project/selection.h"
#include "store/store.h"
#include "platform/platform.h"

namespace cvm {

namespace fs = std::filesystem;

struct LaunchPlan {
    enum class Kind {
        Toolkit, // run `program` of the selection, started as `started_as`, in its environment
        System,  // fall through to the next program of the name on PATH outside the shims
        Refuse   // say `message` and stop with `exit_code`
    };
    Kind kind = Kind::System;
    // System: the line when PATH has no such program outside the shims; Refuse: the line.
    std::string message;
    int exit_code = 127;
    const char* error_code = "not_found"; // Refuse: --json's code ("not_installed": the selection)
    // Toolkit: the file that runs (checked: neither it nor a folder its links pass through can
    // be changed by another user), and the path it is started as: the merged view's bin/TOOL
    // (nvcc takes its folders from the path it was started by), else the file itself.
    fs::path program;
    fs::path started_as;
    // Toolkit: the selection and its folders, from which compute_environment makes the variables
    // (after ensure_view has made the view).
    std::optional<Resolved> resolved;
    Layout layout;
};

// A tool's name as the plan takes it, from the name typed (`cvm which NVCC`) or the path a shim was
// started by (argv[0]): `file`, the program's file name (on Windows lower-case and with .exe, as
// cmd finds it through PATHEXT whatever the case typed), and `shown`, the name the lines give
// (without .exe).
struct ToolName {
    std::string file;
    std::string shown;
};
ToolName tool_name(const std::string& typed, platform::Os os = platform::host_os());

// The plan for `tool` (its file name; on Windows with .exe) under `sel`. `shown` names it in the
// lines ("nvcc"). `store` is called only when a toolkit is to be run (the shim reads the config
// files that list the store's layers then and only then). `launcher`: the shim's own file, never
// run as a tool (two copies of it on PATH would run each other). Throws TrustError.
LaunchPlan plan_launch(const std::string& tool, const std::string& shown, const Selection& sel,
                       const std::function<const Store&()>& store,
                       const std::optional<platform::FileId>& launcher);

// The first of `dirs` holding `tool` as a regular executable that is not `launcher` (its stat in
// `meta`, its index in `index`); empty when none does. The rule by which the plan, and the nvcc of
// a view (shims/shim.cpp), find a toolkit's program.
fs::path find_tool(const std::vector<fs::path>& dirs, const std::string& tool,
                   const std::optional<platform::FileId>& launcher, platform::FileMeta& meta,
                   size_t* index = nullptr);

// What handing a selection's programs over to a shell or a command takes (`cvm exec`, `env`,
// `script`, `probe`, which put its bin first on PATH, so whatever runs there later runs unchecked):
// every program of the toolkit's folders (`layout.tool_dirs`) passes the check the plan makes of
// the one it runs (check_entry_file_trusted). Throws TrustError for the first that fails, with the
// shim's line. The shim and the prompt hook (which keeps the shims first) check each program as it
// runs instead.
void check_selection_programs(const Resolved& r, const Layout& layout);

// The environment a selection's programs run in, the one assembly every activation uses (the
// shim, `cvm exec`, `env`, `shell`, `script`, `probe`, the prompt hook): makes the merged view
// (ensure_view) and returns the changes of the variables from `layout` (selection_layout) against
// `current`. `order`: where the selection's bin goes on PATH (the prompt hook keeps the shims
// first).
std::vector<EnvChange> selection_environment(const Store& store, const Resolved& r,
                                             const Layout& layout, const EnvLookup& current,
                                             platform::Os os = platform::host_os(),
                                             PathOrder order = PathOrder::SelectionFirst);

} // namespace cvm
