// `cvm env`, `cvm deactivate`, `cvm script`, `cvm init`: shell code for a selection. The text
// itself comes from shells/shell.h; this file picks the shell, the selection and the output.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <memory>

#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/context.h"
#include "cli/errors.h"
#include "cli/framework_warning.h"
#include "cli/hook_env.h"
#include "store/resolve.h"
#include "shells/shell.h"
#include "platform/platform.h"

namespace cvm::cli {

namespace {

Shell shell_of(const std::string& option, const std::string& command) {
    if (option.empty())
        return detect_shell([](const std::string& n) { return platform::get_env(n); },
                            platform::host_os(), platform::parent_process_name());
    auto s = parse_shell(option);
    if (!s)
        throw UsageError(command + ": --shell " + printable(option) +
                         " is not one of bash, zsh, fish, pwsh, cmd");
    return *s;
}

template <typename F> std::string rendered(const std::string& command, F&& render) {
    try {
        return render();
    } catch (const ShellError& e) {
        throw Failure(command + ": " + e.what());
    }
}

// A variable as it was before the current activation: the code an activation prints first
// undoes the earlier one, so its values start from the saved ones.
std::optional<std::string> pre_activation_value(const std::string& name) {
    auto saved = platform::get_env("_CVM_SAVED");
    if (saved) {
        std::string list = " " + *saved + " ";
        if (list.find(" " + name + " ") != std::string::npos)
            return platform::get_env("_CVM_OLD_" + name);
    }
    return platform::get_env(name);
}

std::vector<EnvChange> activation_changes(const Store& store, const Resolved& r, Layout& layout) {
    return selection_changes(store, r, &layout, pre_activation_value);
}

// A new file renamed into place: a link already at that name (activate_cuda124.sh -> ~/.bashrc
// in a cloned project) is replaced, never written through. A FIFO or a character device
// (/dev/null) is written to, never replaced (issue 33); a block device or a socket is refused.
void write_file(const fs::path& file, const std::string& text) {
    std::error_code ec;
    if (fs::is_directory(fs::symlink_status(file, ec)))
        throw Failure("script: cannot write " + file.u8string() +
                      ": it is a folder; give another name with -o FILE");
    std::string refusal = platform::output_refusal(file);
    if (!refusal.empty() && refusal != "a folder")
        throw UsageError("script: cannot write " + file.u8string() + ": it is " + refusal +
                         "; give a file name with -o FILE, or -o - for standard output");
    try {
        platform::write_output_file(file, text);
    } catch (const fs::filesystem_error& e) {
        if (e.code() == std::errc::no_such_device_or_address)
            throw Failure("script: cannot write " + file.u8string() +
                          ": nothing reads that FIFO; start its reader first, or use -o -");
        throw Failure("script: " + system_error_line(e));
    }
}

// A script path as a shell command takes it: a bare file name gets "./" (`. name` searches PATH).
std::string shown_path(const std::string& target) {
    return fs::u8path(target).has_parent_path() ? target : "./" + target;
}

void register_env_command(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "env", "Print code that activates the selection in this shell: eval \"$(cvm env)\"");
    auto shell = std::make_shared<std::string>();
    auto spec = std::make_shared<std::string>();
    cmd->add_option("--shell", *shell, "bash, zsh, fish, pwsh or cmd (default: the current shell)");
    cmd->add_option("spec", *spec, "CUDA[+CUDNN] instead of the selection for this folder");
    cmd->footer(
        "bash/zsh: eval \"$(cvm env)\"    fish: cvm env --shell fish | source\n"
        "pwsh: cvm env --shell pwsh | Out-String | Invoke-Expression\n"
        "cmd: cvm env --shell cmd > \"%TEMP%\\cvm-env.bat\" && call \"%TEMP%\\cvm-env.bat\"\n"
        "Undo with cvm_deactivate (bash, zsh, fish, pwsh) or the output of `cvm deactivate`.");
    cmd->callback([shell, spec] {
        Shell sh = shell_of(*shell, "env");
        // As `cvm script`: cmd code for Linux toolkits would set Linux paths and LD_LIBRARY_PATH.
        if (sh == Shell::Cmd && platform::host_os() != platform::Os::Windows)
            throw UsageError(
                "env: cmd code needs a Windows store, and this one holds Linux toolkits; run "
                "`cvm env --shell cmd` with cvm on Windows, or `cvm env --shell bash` here");
        Store store = open_store();
        Selection sel = current_selection(store, spec->empty() ? std::nullopt
                                                               : std::optional<std::string>(*spec));
        if (sel.origin != Selection::Origin::None && sel.spec.system) {
            // `system` means no override: undo whatever cvm activated.
            print_text(rendered("env", [&] { return render_deactivate(sh); }));
            return;
        }
        Resolved r = resolve_selection(store, sel);
        Layout layout;
        auto changes = activation_changes(store, r, layout);
        print_text(rendered("env", [&] { return render_env(sh, changes); }));
    });
}

void register_deactivate_command(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "deactivate", "Print code that restores what `cvm env` or an activation script changed");
    auto shell = std::make_shared<std::string>();
    auto hook = std::make_shared<std::string>();
    cmd->add_option("--shell", *shell, "bash, zsh, fish, pwsh or cmd (default: the current shell)");
    add_prompt_hook_option(*cmd, *hook);
    cmd->footer("With the cvm function of `cvm init`, `cvm deactivate` also undoes what the prompt hook "
                "applied and turns the hook off in this shell (it says so): the environment no longer "
                "follows `cd` until `cvm shell --unset` (or `cvm shell SPEC`) turns it on again.\n"
                "Without the function: eval \"$(cvm deactivate)\" (the hook is not touched).");
    cmd->callback([shell, hook] {
        Shell sh = shell_of(*shell, "deactivate");
        // Typed at a prompt without the cvm function of `cvm init`: the code would only be printed.
        if (shell->empty() && platform::is_terminal(1))
            throw UsageError(integration_missing("deactivate", sh));
        std::string text = rendered("deactivate", [&] { return render_deactivate(sh); });
        // Then what the prompt hook applied, read as it is once the manual activation is undone.
        if (sh != Shell::Cmd) {
            auto undo = hook_undo_changes(pre_activation_value);
            text += rendered("deactivate", [&] { return render_assignments(sh, undo); });
        }
        print_text(text);
        if (auto line = prompt_hook_line("deactivate", *hook); !line.empty()) note(line);
    });
}

void register_script_command(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "script",
        "Write a standalone activation script into this folder (activate_cuda112.sh, .fish, .ps1, "
        "or, from cvm on Windows, .bat for cmd, for CUDA 11.2)");
    auto shell = std::make_shared<std::string>();
    auto spec = std::make_shared<std::string>();
    auto output = std::make_shared<std::string>();
    cmd->add_option("spec", *spec, "CUDA[+CUDNN] (default: the selection for this folder)");
    cmd->add_option("--shell", *shell, "cmd, pwsh, bash, zsh or fish (default: the current shell)");
    cmd->add_option("-o,--output", *output,
                    "the file to write; '-' for standard output (default: activate_cudaXY.sh, "
                    ".fish, .ps1 or .bat in this folder)");
    cmd->callback([shell, spec, output] {
        Shell sh = shell_of(*shell, "script");
        if (sh == Shell::Cmd && platform::host_os() != platform::Os::Windows) {
            // The same command, to type on Windows, where the store holds Windows toolkits.
            std::string words = (spec->empty() ? std::string() : " " + printable(*spec)) +
                                (output->empty() ? std::string() : " -o " + printable(*output));
            throw UsageError("script: .bat scripts come from cvm on Windows (this store holds Linux toolkits): run `cvm "
                             "script" + words + " --shell cmd` there, in cmd or PowerShell; here, `cvm script" + words +
                             " --shell bash`");
        }
        Store store = open_store();
        Selection sel = current_selection(store, spec->empty() ? std::nullopt
                                                               : std::optional<std::string>(*spec));
        if (sel.origin != Selection::Origin::None && sel.spec.system)
            throw UsageError("script: 'system' changes nothing (" + sel.origin_text() +
                             "); give a toolkit, e.g. cvm script 12.4");
        Resolved r = resolve_selection(store, sel);
        // A script activates the selection without `cvm use`, which says this line otherwise.
        warn_framework_libraries(store, r);
        Layout layout;
        auto changes = selection_changes(store, r, &layout);

        std::string target =
            output->empty() ? script_file_name(sh, layout.toolkit_version) : *output;
        bool to_stdout = target == "-" || target == "/dev/stdout";

        ActivationScript s;
        s.active = r.active();
        s.file_name = to_stdout ? script_file_name(sh, layout.toolkit_version)
                                : fs::u8path(target).filename().u8string();
        s.changes = changes;
        for (const auto& d : layout.bin_dirs)
            s.bin_dirs.push_back(d.u8string());
        for (const auto& d : layout.lib_dirs)
            s.lib_dirs.push_back(d.u8string());
        for (const auto& d : layout.include_dirs)
            s.include_dirs.push_back(d.u8string());
        for (const auto& l : store.layers())
            s.store_layers.push_back(l.u8string());
        s.shims_dir = store.shims_dir().u8string();
        s.os = platform::host_os();
        std::string text = rendered("script", [&] { return render_script(sh, s); });
        if (to_stdout) {
            print_text(text);
            return;
        }
        write_file(fs::u8path(target), text);
        switch (sh) {
        case Shell::Cmd:
            note("wrote " + target + ": `call " + s.file_name + "` activates " + s.active +
                 ", `call " + s.file_name + " deactivate` restores");
            break;
        case Shell::Pwsh:
            note("wrote " + target + ": `. ./" + s.file_name + "` activates " + s.active +
                 ", `cvm_deactivate` restores");
            break;
        case Shell::Fish:
            note("wrote " + target + ": `source " + shown_path(target) + "` activates " + s.active +
                 ", `cvm_deactivate` restores");
            break;
        default:
            note("wrote " + target + ": `. " + shown_path(target) + "` activates " + s.active +
                 ", `cvm_deactivate` restores");
        }
    });
}

void register_init_command(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "init", "Print what a shell's rc file needs (the shims folder on PATH, completions)");
    auto shell = std::make_shared<std::string>();
    auto no_hook = std::make_shared<bool>(false);
    cmd->add_option("shell", *shell, "bash, zsh, fish or pwsh");
    cmd->add_flag("--no-hook", *no_hook,
                  "no prompt hook: the environment does not follow the folder (shims still do)");
    cmd->footer("bash: echo 'eval \"$(cvm init bash)\"' >> ~/.bashrc\n"
                "zsh:  echo 'eval \"$(cvm init zsh)\"' >> ~/.zshrc   (after compinit)\n"
                "fish: echo 'cvm init fish | source' >> ~/.config/fish/config.fish\n"
                "pwsh: Add-Content $PROFILE 'cvm init pwsh | Out-String | Invoke-Expression'");
    cmd->callback([shell, no_hook] {
        if (shell->empty()) throw UsageError("init: name the shell: cvm init bash|zsh|fish|pwsh");
        auto sh = parse_shell(*shell);
        if (!sh)
            throw UsageError("init: " + printable(*shell) + " is not one of bash, zsh, fish, pwsh");
        Store store = open_store();
        InitOptions o;
        o.shims_dir = store.shims_dir().u8string();
        o.exe = platform::current_exe().u8string();
        o.hook = !*no_hook;
        o.global_file = store.global_version_file().u8string();
        for (const auto& layer : store.layers())
            for (const char* kind : {"cuda", "cudnn"})
                o.watched.push_back((layer / kind).u8string());
        o.stamp_dir = (store.cache_dir() / "hook").u8string();
        try {
            print_text(render_init(*sh, o) + completion_script(shell_name(*sh), o.exe));
        } catch (const ShellError& e) {
            throw UsageError(std::string("init: ") + e.what());
        }
    });
}

} // namespace

void register_env(CLI::App& app) {
    register_env_command(app);
    register_deactivate_command(app);
    register_script_command(app);
    register_init_command(app);
    register_hook_env(app);
    register_shell(app);
}

} // namespace cvm::cli
