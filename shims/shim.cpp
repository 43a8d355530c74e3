// The shim launcher. Every file in $CVM_ROOT/shims is a link to (or copy of) this program; its
// own name says which tool to run. It resolves the selection for the current folder, sets the
// environment of that selection and replaces itself with the real tool.
//
// Kept small on purpose: it runs before every nvcc. No CLI parser, no TOML, no network; it reads
// a version file, lists two store folders and reads two entry files.
#include <cstdio>
#include <string>
#include <system_error>
#include <vector>

#include "core/config.h"
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

bool same_file(const fs::path& a, const fs::path& b) {
    std::error_code ec;
    return fs::equivalent(a, b, ec);
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args = platform::utf8_args(argc, argv);
    if (args.empty()) fail(2, "started without a name");
    std::string tool = tool_name(args[0]);
    std::string base = tool;
    if (base.size() > 4 && base.compare(base.size() - 4, 4, ".exe") == 0) base.resize(base.size() - 4);
    if (base == "cvm-shim")
        fail(2, "cvm-shim runs through the links in the shims folder; run `cvm rehash` and put "
                "`cvm init` in your shell's rc file");

    try {
        Store store = Store::from_environment();
        std::error_code ec;
        fs::path cwd = fs::current_path(ec);
        Selection sel = find_selection(cwd, platform::get_env("CVM_VERSION"), store.global_version_file());
        if (sel.origin == Selection::Origin::None)
            fail(127, "no CUDA version is selected here for " + base +
                          "; run `cvm use SPEC` (or `cvm use --global SPEC`), see `cvm list`");
        fs::path self = platform::current_exe();
        if (sel.spec.system) {
            fs::path real = find_system_tool(tool, platform::get_env("PATH").value_or(""),
                                             store.shims_dir(), self);
            if (real.empty())
                fail(127, base + " is not installed outside cvm ('system' is selected by " +
                              sel.origin_text() + "); run `cvm use SPEC` to pick a toolkit");
            args[0] = real.u8string();
            platform::exec_replace(real, args, platform::environment());
        }
        Resolved r;
        try {
            r = resolve(store, sel.spec);
        } catch (const ResolveError& e) {
            fail(127, std::string(e.what()) + " (selected by " + sel.origin_text() + ")");
        }
        fs::path view = ensure_view(store, r);
        Layout layout = layout_of(r, view, platform::host_os());
        fs::path real;
        for (const auto& dir : layout.bin_dirs) {
            fs::path candidate = dir / fs::u8path(tool);
            if (platform::is_executable(candidate) && !same_file(candidate, self)) {
                real = candidate;
                break;
            }
        }
        if (real.empty())
            fail(127, base + " is not part of CUDA " + r.toolkit.id + " (selected by " +
                          sel.origin_text() + "); run `cvm which " + base +
                          "` or select another toolkit with `cvm use SPEC`");
        auto changes = compute_environment(layout, platform::get_env("PATH"),
                                           platform::get_env("LD_LIBRARY_PATH"),
                                           foreign_dirs_of(store), platform::host_os());
        auto env = platform::environment();
        apply_changes(env, changes);
        args[0] = real.u8string();
        platform::exec_replace(real, args, env);
    } catch (const SelectionError& e) {
        fail(2, e.what());
    } catch (const ConfigError& e) {
        fail(2, e.what());
    } catch (const std::exception& e) {
        fail(1, e.what());
    }
}
