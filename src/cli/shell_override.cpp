// `cvm shell SPEC`: a session override through CVM_VERSION (as `pyenv shell` and `mise shell`);
// `cvm shell --unset` drops it. The binary prints the code; the `cvm` function of `cvm init`
// runs it in the shell (then the prompt hook applies the selection at once).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/framework_warning.h"
#include "cli/hook_env.h"
#include "platform/platform.h"

namespace cvm::cli {

void register_shell(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "shell", "Select CUDA[+CUDNN] for this shell only (CVM_VERSION); --unset drops it");
    auto spec = std::make_shared<std::string>();
    auto shell = std::make_shared<std::string>();
    auto unset = std::make_shared<bool>(false);
    cmd->add_option("spec", *spec, "e.g. 11.2, 12.4+9, system");
    cmd->add_flag("--unset", *unset,
                  "drop the session override: the folder's selection applies again (and the "
                  "prompt hook is on again after `cvm deactivate`)");
    cmd->add_option("--shell", *shell,
                    "bash, zsh, fish or pwsh (set by the cvm function of cvm init)");
    auto hook = std::make_shared<std::string>();
    add_prompt_hook_option(*cmd, *hook);
    cmd->footer("Needs the cvm function that `cvm init` defines; without it:\n"
                "  bash/zsh: eval \"$(cvm shell SPEC --shell bash)\"    fish: cvm shell SPEC "
                "--shell fish | source\n"
                "After `cvm deactivate` (which turns the prompt hook off in this shell), `cvm shell "
                "SPEC` and `cvm shell --unset` turn the hook on again, and say so.");
    cmd->callback([spec, shell, unset, hook] {
        const std::string hook_line = prompt_hook_line("shell", *hook);
        if (*unset && !spec->empty())
            throw UsageError("shell: --unset takes no SPEC (got " + printable(*spec) +
                             "); run `cvm shell --unset`");
        if (spec->empty() && !*unset) {
            auto v = platform::get_env("CVM_VERSION");
            if (v && !v->empty())
                note("CVM_VERSION=" + *v + " selects in this shell; `cvm shell --unset` drops it");
            else
                note("no session override (CVM_VERSION is not set); `cvm shell SPEC` sets one");
            if (!hook_line.empty()) note(hook_line);
            return;
        }
        Shell sh = Shell::Bash;
        if (shell->empty()) {
            sh = detect_shell([](const std::string& n) { return platform::get_env(n); },
                              platform::host_os(), platform::parent_process_name());
            // Typed at a prompt without the function: the code would only be printed.
            if (platform::is_terminal(1)) throw UsageError(integration_missing("shell", sh));
        } else {
            auto s = parse_shell(*shell);
            if (!s || *s == Shell::Cmd)
                throw UsageError("shell: --shell " + printable(*shell) +
                                 " is not one of bash, zsh, fish, pwsh");
            sh = *s;
        }
        std::vector<EnvChange> changes;
        if (*unset) {
            changes.push_back({"CVM_VERSION", std::nullopt});
        } else {
            Spec s = spec_argument(*spec);
            if (!s.system) {
                Store store = open_store();
                // Not installed: says what to run, naming the command line as the spec's source.
                warn_framework_libraries(store, resolve_selection(store, current_selection(store, *spec)));
            }
            changes.push_back({"CVM_VERSION", s.str()});
        }
        std::string text = render_assignments(sh, changes);
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
        if (!hook_line.empty()) note(hook_line);
    });
}

} // namespace cvm::cli
