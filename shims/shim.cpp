// The shim launcher. Every file in $CVM_ROOT/shims is a link to (or copy of) this program; its
// own name says which tool to run. It resolves the selection for the current folder, sets the
// environment of that selection and replaces itself with the real tool. With nothing selected,
// `system` selected, or a program no toolkit has, it runs the next program of its name on PATH
// as if it were not there (fall-through).
//
// Kept small on purpose: it runs before every nvcc. No CLI parser, no TOML, no network; it reads
// a version file, lists two store folders and reads two entry files. The config files' store_path
// comes precompiled from $CVM_ROOT/cache/config while they are unchanged (config/config_cache.h):
// TOML is parsed only the first time after a config file changed.
//
// It is also the nvcc of a view made for a toolkit older than CUDA 12.0 whose host compiler cvm
// hands over (activation/view.h): started as <root>/views/<id>/bin/nvcc, it adds -ccbin and starts the
// toolkit's nvcc as if from there.
#include <cstdio>
#include <string>
#include <system_error>
#include <vector>

#include "config/config.h"
#include "store/entry_trust.h"
#include "activation/environment.h"
#include "store/error_line.h"
#include "activation/host_compiler_choice.h"
#include "activation/launch_plan.h"
#include "store/resolve.h"
#include "project/selection.h"
#include "activation/shims.h"
#include "store/store.h"
#include "activation/view.h"
#include "platform/platform.h"
#include "text/path_list.h"

namespace {

namespace fs = std::filesystem;
using namespace cvm;

[[noreturn]] void fail(int code, const std::string& message) {
    std::fprintf(stderr, "cvm: %s\n", message.c_str());
    std::fflush(stderr);
    std::exit(code);
}

// Runs the next `tool` on PATH that is neither a shim nor this launcher, with the same argv and
// environment (plus the depth marker); `missing` is the message when there is none.
[[noreturn]] void fall_through(std::vector<std::string>& args, const std::string& tool,
                               const fs::path& shims_dir, int depth, const std::string& missing,
                               const std::optional<platform::FileId>& self) {
    fs::path real = find_system_tool(tool, platform::get_env("PATH").value_or(""), shims_dir, self);
    if (real.empty()) fail(127, missing);
    platform::set_env(kShimDepthVariable,
                      std::to_string(depth + 1) + ":" + std::to_string(platform::process_id()));
    platform::exec_replace(real, args);
}

// The view this nvcc was started from (<root>/views/<name>/bin/nvcc), directly or through PATH
// as a shell finds it; nullopt for the shims folder's nvcc. A stat a PATH folder up to the
// first that has nvcc: the shims folder, normally.
std::optional<fs::path> started_from_view(const std::string& argv0) {
    fs::path invoked;
    if (argv0.find('/') != std::string::npos) {
        invoked = fs::u8path(argv0);
    } else {
        for (const auto& dir :
             split_path_list(platform::get_env("PATH").value_or(""), platform::Os::Linux)) {
            if (dir.empty()) continue;
            fs::path candidate = fs::u8path(dir) / fs::u8path(argv0);
            if (platform::executable_id(candidate)) {
                invoked = candidate;
                break;
            }
        }
    }
    if (invoked.empty()) return std::nullopt;
    if (invoked.is_relative()) {
        std::error_code ec;
        invoked = fs::current_path(ec) / invoked;
    }
    invoked = invoked.lexically_normal();
    fs::path bin = invoked.parent_path();
    fs::path view = bin.parent_path();
    if (bin.filename() != "bin" || view.parent_path().filename() != "views") return std::nullopt;
    return view;
}

// nvcc as a view's bin/nvcc: the toolkit's nvcc started as if from the view (nvcc takes its
// folders from the path it was started by), with the host compiler cvm handed over. The
// environment is the caller's: a Makefile's, or an activated shell's.
[[noreturn]] void run_view_nvcc(const fs::path& view, std::vector<std::string>& args) {
    fs::path root = view.parent_path().parent_path();
    // A Makefile may run with another CVM_ROOT than the one that made the view: the view's store
    // decides.
    fs::path configured;
    try {
        configured = Store::default_root();
    } catch (const std::exception&) {
    }
    if (configured.lexically_normal() != root) platform::set_env("CVM_ROOT", root.u8string());
    Store store = Store::from_environment();
    std::string name = view.filename().u8string();
    std::string id = name.substr(0, name.find('+'));
    auto toolkit = store.find(Kind::Cuda, id);
    if (!toolkit)
        fail(127,
             "nvcc: " + view.u8string() + " is a view of CUDA " + id +
                 ", which is not installed any more; run `cvm use SPEC` and use its CUDA_HOME");
    check_entry_trusted(*toolkit);
    std::vector<fs::path> dirs;
    for (const auto& b : toolkit->bin_dirs)
        dirs.push_back(toolkit->path / fs::u8path(b));
    platform::FileMeta meta;
    fs::path real = find_tool(dirs, "nvcc", platform::file_id(platform::self_path_for_identity()), meta);
    if (real.empty()) fail(127, "nvcc: CUDA " + id + " has no nvcc in " + toolkit->path.u8string());
    check_entry_file_trusted(*toolkit, real, &meta);
    HostCompiler handed = handed_host_compiler(root, id);
    add_ccbin_argument(handed,
                       handed.path.empty() ? toolkit->version.major() >= 12 : handed.via_env, args);
    args[0] = (view / "bin" / "nvcc").u8string();
    platform::exec_replace(real, args);
}

} // namespace

int main(int argc, char** argv) {
    platform::restrict_file_creation_mask(); // the view it may make; the tool gets the user's back
    std::vector<std::string> args = platform::utf8_args(argc, argv);
    if (args.empty()) fail(2, "started without a name");
    const ToolName name = tool_name(args[0]);
    const std::string& tool = name.file;
    const std::string& base = name.shown;
    if (base == "cvm-shim")
        fail(2, "cvm-shim runs through the links in the shims folder; run `cvm rehash` and put "
                "`cvm init` in your shell's rc file");
    // Two copies of the launcher on PATH (one copied, not linked) would run each other forever.
    // (No getpid() unless a marker is there to compare with: most runs have none.)
    auto marker = platform::get_env(kShimDepthVariable);
    int depth = marker ? shim_depth(marker, platform::process_id()) : 0;
    if (depth >= kMaxShimDepth)
        fail(127, base + ": " + std::to_string(depth) +
                      " cvm shims ran each other through PATH; remove the extra copy of cvm-shim "
                      "from PATH (see `type -a " +
                      base + "`)");

    try {
        // The selection and a fall-through need only $CVM_ROOT; the store's other layers (and
        // so the config files that list them) are read once a toolkit is to be run.
        fs::path root = Store::default_root();
        fs::path shims_dir = root / "shims";
        if (base == "nvcc" && platform::host_os() == platform::Os::Linux)
            if (auto view = started_from_view(args[0])) run_view_nvcc(*view, args);
        std::error_code ec;
        fs::path cwd = platform::current_folder(ec);
        Selection sel;
        if (!is_host_program(base)) {
            sel = find_selection(cwd, platform::get_env("CVM_VERSION"), root / "version");
            for (const auto& w : sel.warnings)
                std::fprintf(stderr, "cvm: warning: %s\n", w.c_str());
        }
        std::optional<Store> store;
        auto open = [&store]() -> const Store& {
            if (!store) store = Store::from_environment();
            return *store;
        };
        // Which program, in which environment: activation/launch_plan.h decides, as for `cvm which`.
        // This launcher's identity (one stat): never run as a tool, nor fallen through to.
        const auto self = platform::file_id(platform::self_path_for_identity());
        LaunchPlan plan = plan_launch(tool, base, sel, open, self);
        if (plan.kind == LaunchPlan::Kind::System)
            fall_through(args, tool, shims_dir, depth, plan.message, self);
        if (plan.kind == LaunchPlan::Kind::Refuse) fail(plan.exit_code, plan.message);
        const Resolved& r = *plan.resolved;
        auto changes = selection_environment(*store, r, plan.layout,
                                             [](const std::string& n) { return platform::get_env(n); });
        for (const auto& c : changes)
            platform::set_env(c.name, c.value);
        if (base == "nvcc") {
            const HostCompiler& handed = plan.layout.host_compiler;
            add_ccbin_argument(
                handed, handed.path.empty() ? r.toolkit.version.major() >= 12 : handed.via_env,
                args);
        }
        args[0] = plan.started_as.u8string();
        // Windows programs know their path from the file they were started from, not argv[0]: the
        // view's (a hard link of the same file, made by cvm in its store).
        if (platform::host_os() == platform::Os::Windows && plan.started_as != plan.program &&
            platform::exists(plan.started_as.u8string()))
            platform::exec_replace(plan.started_as, args);
        platform::exec_replace(plan.program, args);
    } catch (const SelectionError& e) {
        fail(2, e.what());
    } catch (const ConfigError& e) {
        fail(2, e.what());
    } catch (const std::exception& e) {
        fail(1, error_text(e)); // a full store: the path and what to do, no staging name
    }
}
