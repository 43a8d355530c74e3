// The shim launcher. Every file in $CVM_ROOT/shims is a link to (or copy of) this program; its
// own name says which tool to run. It resolves the selection for the current folder, sets the
// environment of that selection and replaces itself with the real tool. With nothing selected,
// `system` selected, or a program no toolkit has, it runs the next program of its name on PATH
// as if it were not there (fall-through).
//
// Kept small on purpose: it runs before every nvcc. No CLI parser, no TOML, no network; it reads
// a version file, lists two store folders and reads two entry files.
#include <cstdio>
#include <string>
#include <system_error>
#include <vector>

#include "compat/ccbin.h"
#include "core/config.h"
#include "core/entry_trust.h"
#include "core/environment.h"
#include "core/selection.h"
#include "core/shims.h"
#include "core/store.h"
#include "core/view.h"
#include "platform/platform.h"

namespace {

namespace fs = std::filesystem;
using namespace cvm;

[[noreturn]] void fail(int code, const std::string& message) {
    std::fprintf(stderr, "cvm: %s\n", message.c_str());
    std::fflush(stderr);
    std::exit(code);
}

std::string tool_name(const std::string& argv0) {
    std::string name = fs::u8path(argv0).filename().u8string();
    if (platform::host_os() == platform::Os::Windows) {
        for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (name.size() < 4 || name.compare(name.size() - 4, 4, ".exe") != 0) name += ".exe";
    }
    return name;
}

std::string join_ids(const std::vector<std::string>& ids) {
    std::string out;
    for (size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + ids[i];
    return out;
}

// Runs the next `tool` on PATH that is neither a shim nor this launcher, with the same argv and
// environment (plus the depth marker); `missing` is the message when there is none.
[[noreturn]] void fall_through(std::vector<std::string>& args, const std::string& tool,
                               const fs::path& shims_dir, int depth, const std::string& missing) {
    auto self = platform::file_id(platform::self_path_for_identity());
    fs::path real = find_system_tool(tool, platform::get_env("PATH").value_or(""), shims_dir, self);
    if (real.empty()) fail(127, missing);
    platform::set_env(kShimDepthVariable,
                      std::to_string(depth + 1) + ":" + std::to_string(platform::process_id()));
    platform::exec_replace(real, args);
}

} // namespace

int main(int argc, char** argv) {
    platform::restrict_file_creation_mask(); // the view it may make; the tool gets the user's back
    std::vector<std::string> args = platform::utf8_args(argc, argv);
    if (args.empty()) fail(2, "started without a name");
    std::string tool = tool_name(args[0]);
    std::string base = tool;
    if (base.size() > 4 && base.compare(base.size() - 4, 4, ".exe") == 0) base.resize(base.size() - 4);
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
                      "from PATH (see `type -a " + base + "`)");

    try {
        // The selection and a fall-through need only $CVM_ROOT; the store's other layers (and
        // so the config files that list them) are read once a toolkit is to be run.
        fs::path root = Store::default_root();
        fs::path shims_dir = root / "shims";
        // A stale shim of a compiler or a shell stands for the machine's own program.
        if (is_host_program(base))
            fall_through(args, tool, shims_dir, depth,
                         base + " is not on PATH outside cvm's shims; run `cvm rehash` to remove "
                                "the stale shim " + (shims_dir / fs::u8path(tool)).u8string());
        std::error_code ec;
        fs::path cwd = fs::current_path(ec);
        Selection sel = find_selection(cwd, platform::get_env("CVM_VERSION"), root / "version");
        for (const auto& w : sel.warnings) std::fprintf(stderr, "cvm: warning: %s\n", w.c_str());
        if (sel.origin == Selection::Origin::None)
            fall_through(args, tool, shims_dir, depth,
                         "no CUDA version is selected here and " + base +
                             " is not on PATH outside cvm's shims; run `cvm use SPEC` (or `cvm use "
                             "--global SPEC`), see `cvm list`");
        if (sel.spec.system)
            fall_through(args, tool, shims_dir, depth,
                         base + " is not installed outside cvm ('system' is selected by " +
                             sel.origin_text() + "); run `cvm use SPEC` to pick a toolkit");
        Store store = Store::from_environment();
        Resolved r;
        try {
            r = resolve(store, sel.spec);
        } catch (const ResolveError& e) {
            fail(127, std::string(e.what()) + " (selected by " + sel.origin_text() + ")");
        }
        auto self = platform::file_id(platform::self_path_for_identity());
        // The view's name is known before it exists (ensure_view below makes it once the
        // program is found), so the layout is computed once.
        Layout layout = layout_of(r, view_path(store, r), platform::host_os());
        fs::path real;
        platform::FileMeta real_meta;
        for (const auto& dir : layout.bin_dirs) {
            fs::path candidate = dir / fs::u8path(tool);
            auto id = platform::executable_id(candidate, &real_meta);
            if (id && (!self || *id != *self)) {
                real = candidate;
                break;
            }
        }
        if (real.empty()) {
            // Only on this path are the other toolkits' entries read.
            auto others = toolkits_with(store, tool);
            if (!others.empty())
                fail(127, base + " is not part of CUDA " + r.toolkit.id + " (selected by " +
                              sel.origin_text() + ") but of CUDA " + join_ids(others) +
                              "; run `cvm use SPEC` to select one of them");
            fall_through(args, tool, shims_dir, depth,
                         base + " is not part of CUDA " + r.toolkit.id + " (selected by " +
                             sel.origin_text() + ") nor on PATH outside cvm's shims; run `cvm which " +
                             base + "` or select another toolkit with `cvm use SPEC`");
        }
        // The program itself, not only its folders (resolve checked those): another user's file
        // in a folder of the entry is not run. Its stat is the one that found it.
        check_entry_file_trusted(r.toolkit, real, &real_meta);
        ensure_view(store, r);
        auto changes = compute_environment(layout, platform::get_env("PATH"),
                                           platform::get_env("LD_LIBRARY_PATH"),
                                           foreign_dirs_of(store), platform::host_os());
        for (const auto& c : changes) platform::set_env(c.name, c.value);
        compat::apply_host_compiler(root, r.toolkit.id, base, args);
        args[0] = real.u8string();
        platform::exec_replace(real, args);
    } catch (const SelectionError& e) {
        fail(2, e.what());
    } catch (const ConfigError& e) {
        fail(2, e.what());
    } catch (const std::exception& e) {
        fail(1, e.what());
    }
}
