// `cvm hook-env` (hidden): what the prompt hook of `cvm init` runs when the folder, a version
// file, CVM_VERSION or the store changed. It prints assignments that take back what the hook
// applied before (shells/hook.h) and apply the selection of this folder; nothing when that
// selection is already applied. A bad version file or a selection that is not installed gets
// one line on stderr and leaves the environment as it is.
#include "cli/hook_env.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/context.h"
#include "store/error_line.h"
#include "shells/hook.h"
#include "activation/launch_plan.h"
#include "store/resolve.h"
#include "activation/view.h"
#include "platform/platform.h"

namespace cvm::cli {

namespace {

std::optional<std::string> from_environment(const std::string& name) {
    return platform::get_env(name);
}

// The stamp the shell compares the version files and the store with: written (not just
// touched) before anything is read, so its time comes from the same clock as the files' and an
// edit made while this runs is seen at the next prompt. Stamps of shells gone a day are removed.
void write_stamp(const fs::path& cache, const std::string& pid) {
    if (pid.empty() || pid.size() > 10 || pid.find_first_not_of("0123456789") != std::string::npos)
        throw UsageError("hook-env: --pid takes the shell's process id");
    std::error_code ec;
    fs::path dir = cache / "hook";
    fs::create_directories(dir, ec);
    // The stamp of an earlier prompt is written over where it is (a rename or a truncation would
    // make ext4 write it out at once: milliseconds at every prompt); else a new file renamed into
    // place: a FIFO or link put at the stamp's name is replaced, never opened (an open for
    // writing would wait on a FIFO, and the prompt with it).
    try {
        if (!platform::rewrite_in_place(dir / pid, pid + "\n"))
            platform::write_file_atomically(dir / pid, pid + "\n");
    } catch (const std::exception&) {
    }
    const auto old = fs::file_time_type::clock::now() - std::chrono::hours(24);
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code e2;
        if (it->is_regular_file(e2) && fs::last_write_time(it->path(), e2) < old && !e2)
            fs::remove(it->path(), e2);
    }
}

// A reason the version files cannot be read safely (a FIFO or a device where a file should be,
// which an open would wait on; a file that cannot be read); empty when there is none.
std::string version_file_problem(const fs::path& cwd, const fs::path& global) {
    auto check = [](const fs::path& file, bool& found) -> std::string {
        std::error_code ec;
        auto st = fs::status(file, ec);
        if (ec || !fs::exists(st) || fs::is_directory(st)) return {};
        if (!fs::is_regular_file(st))
            return file.u8string() +
                   " is not a regular file; remove it or replace it with `cvm use SPEC`";
        auto text = platform::read_file(file, kVersionFileLimit);
        if (!text) return "cannot read " + file.u8string() + "; fix its permissions or remove it";
        found = spec_text_of(*text, nullptr).has_value();
        return {};
    };
    bool found = false;
    for (fs::path dir = cwd;; dir = dir.parent_path()) {
        if (auto p = check(dir / ".cudaversion", found); !p.empty()) return p;
        if (found || dir == dir.parent_path() || dir.parent_path().empty()) break;
    }
    if (found) return {};
    return check(global, found);
}

void set_final(std::vector<EnvChange>& out, const EnvChange& c) {
    for (auto& o : out)
        if (o.name == c.name) {
            o.value = c.value;
            return;
        }
    out.push_back(c);
}

// The assignments for this folder, or nothing (see the top of the file); `problem` gets the line
// to show when the selection here cannot be applied.
std::vector<EnvChange> hook_changes(const Store& store, std::string& problem) {
    const EnvLookup env = from_environment;
    const auto os = platform::host_os();
    // A manual activation (`cvm env`) is in force until cvm_deactivate.
    if (env("_CVM_SAVED")) return {};
    auto text = env("_CVM_HOOK");
    std::optional<HookState> state;
    if (text) state = decode_hook_state(*text);

    std::error_code cwd_error;
    fs::path cwd = platform::current_folder(cwd_error);
    if (cwd_error) return {}; // the folder was removed under the shell: nothing to follow

    std::optional<Resolved> wanted;
    bool not_installed = false;
    try {
        auto session = env("CVM_VERSION");
        if (!session || session->empty())
            problem = version_file_problem(cwd, store.global_version_file());
        if (problem.empty()) {
            Selection sel = current_selection(store, std::nullopt);
            if (sel.origin != Selection::Origin::None && !sel.spec.system)
                wanted = resolve_selection(store, sel);
        }
    } catch (const Failure& e) {
        problem = e.what();
        not_installed = e.code() == "not_installed";
    } catch (const std::exception& e) {
        problem = error_text(e);
    }
    if (!problem.empty() && !not_installed) {
        problem += " (the environment stays as it is)";
        return {};
    }
    // A selection here that nothing installed satisfies: no other folder's toolkit stays active
    // (what the hook applied is taken back below, and the line is said once).
    if (state && wanted && state->active == wanted->active()) return {};
    if (!text && !wanted) return {};

    std::vector<EnvChange> out = state ? undo_hook(*state, env, os) : std::vector<EnvChange>{};
    auto after_undo = [&](const std::string& name) -> std::optional<std::string> {
        for (const auto& c : out)
            if (c.name == name) return c.value;
        return env(name);
    };
    std::optional<std::string> record;
    if (wanted) {
        // The shims stay first: `cd X && nvcc` on one line runs X's nvcc before the next prompt.
        auto apply = selection_environment(store, *wanted, selection_layout(store, *wanted, os),
                                           after_undo, os, PathOrder::AfterShims);
        record = encode_hook_state(record_hook(wanted->active(), apply, after_undo, os));
        for (const auto& c : apply)
            set_final(out, c);
    }
    set_final(out, {"_CVM_HOOK", record});
    std::vector<EnvChange> changed;
    for (const auto& c : out)
        if (c.value != env(c.name)) changed.push_back(c);
    return changed;
}

// Shows `problem` unless it is what this shell was last told: the hook runs again at prompts
// within the second of an edit (fish compares whole seconds), and one line is enough. What
// was said is kept beside the stamp, not in it, so that the stamp's time stays that of the start.
void say_once(const fs::path& cache, const std::string& pid, const std::string& problem) {
    if (pid.empty()) {
        if (!problem.empty()) note(problem);
        return;
    }
    fs::path file = cache / "hook" / (pid + ".said");
    std::string before = platform::read_file(file, 1 << 16).value_or(std::string());
    if (problem == before) return;
    if (!problem.empty()) note(problem);
    std::error_code ec;
    if (problem.empty()) {
        fs::remove(file, ec);
        return;
    }
    try {
        platform::write_file_atomically(file, problem);
    } catch (const std::exception&) {
    }
}

} // namespace

std::vector<EnvChange> hook_undo_changes(const EnvLookup& env) {
    auto text = env("_CVM_HOOK");
    if (!text) return {};
    std::vector<EnvChange> out;
    if (auto state = decode_hook_state(*text)) out = undo_hook(*state, env, platform::host_os());
    out.push_back({"_CVM_HOOK", std::nullopt});
    return out;
}

std::string integration_missing(const std::string& command, Shell shell) {
    std::string how;
    switch (shell) {
    case Shell::Zsh:
        how = "add `eval \"$(cvm init zsh)\"` to ~/.zshrc";
        break;
    case Shell::Fish:
        how = "add `cvm init fish | source` to ~/.config/fish/config.fish";
        break;
    case Shell::Pwsh:
        how = "add `cvm init pwsh | Out-String | Invoke-Expression` to $PROFILE";
        break;
    default:
        how = "add `eval \"$(cvm init bash)\"` to ~/.bashrc";
    }
    return command + ": shell integration is not enabled in this shell, so cvm cannot change it; " +
           how + " and open a new shell";
}

void add_prompt_hook_option(CLI::App& cmd, std::string& state) {
    cmd.add_option("--prompt-hook", state, "on or off: the prompt hook's state (set by the cvm function of cvm init)")
        ->check(CLI::IsMember({"on", "off"}))
        ->group(""); // hidden: only the function passes it
}

std::string prompt_hook_line(const std::string& command, const std::string& state) {
    if (command == "deactivate") {
        if (state == "on")
            return "the prompt hook is now off in this shell: the environment no longer follows `cd` or "
                   ".cudaversion; `cvm shell --unset` turns it on again";
        if (state == "off") return "the prompt hook stays off in this shell; `cvm shell --unset` turns it on again";
        return {};
    }
    if (state == "off")
        return "the prompt hook is on again in this shell: the environment follows `cd` and .cudaversion "
               "(`cvm deactivate` turns it off)";
    return {};
}

void register_hook_env(CLI::App& app) {
    auto* cmd = app.add_subcommand("hook-env", "The prompt hook's step (cvm init)");
    cmd->group(""); // hidden: only the hook runs it
    auto shell = std::make_shared<std::string>();
    auto pid = std::make_shared<std::string>();
    cmd->add_option("--shell", *shell, "bash, zsh, fish or pwsh")->required();
    cmd->add_option("--pid", *pid, "the shell's process id (names its stamp file)");
    cmd->callback([shell, pid] {
        auto sh = parse_shell(*shell);
        if (!sh || *sh == Shell::Cmd)
            throw UsageError("hook-env: --shell " + printable(*shell) +
                             " is not one of bash, zsh, fish, pwsh");
        // The stamp and what was said live in $CVM_ROOT/cache (the store's first layer), known
        // before the config files are read: a broken one is said once too, not at every prompt.
        const fs::path cache = Store::cache_dir_of(Store::default_root());
        if (!pid->empty()) write_stamp(cache, *pid);
        // Whatever happens, the prompt goes on: one line, no half-applied code.
        std::string problem;
        try {
            Store store = open_store();
            print_text(render_assignments(*sh, hook_changes(store, problem)));
        } catch (const std::exception& e) {
            problem = error_text(e) + " (the environment stays as it is)";
        }
        say_once(cache, *pid, problem);
    });
}

} // namespace cvm::cli
