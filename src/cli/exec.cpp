#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/usage.h"
#include "activation/environment.h"
#include "store/resolve.h"
#include "text/path_list.h"
#include "text/suggest.h"
#include "config/trust.h"
#include "platform/platform.h"

namespace cvm::cli {

namespace {

// The words after cvm's own options, as the user typed them: `-- CMD ARGS...`, `SPEC -- CMD
// ARGS...` or `CMD ARGS...`. Splits off the SPEC (only when a `--` follows it) and the `--`.
struct ExecWords {
    std::optional<std::string> spec;
    std::vector<std::string> command;
};

// Whether `word` names a toolkit registered under that name (import --as).
bool names_registered_toolkit(const std::string& word) {
    try {
        return open_store().find(Kind::Cuda, word).has_value();
    } catch (const std::exception&) {
        return false; // the command itself says what is wrong with the store
    }
}

bool program_on_path(const std::string& name) {
    auto path = platform::get_env("PATH");
    return !platform::find_executable(name, path ? *path : std::string()).empty();
}

ExecWords split_exec_words(std::vector<std::string> words) {
    ExecWords out;
    if (!words.empty() && words.front() == "--") {
        words.erase(words.begin());
    } else if (words.size() >= 2 && words[1] == "--") {
        try {
            // A word that could be a toolkit's name is the program when a program of that name
            // is on PATH and no toolkit has it.
            Spec s = parse_spec(words.front());
            if (s.name.empty() || names_registered_toolkit(s.name) || !program_on_path(words.front())) {
                out.spec = words.front();
                words.erase(words.begin(), words.begin() + 2);
            }
        } catch (const SpecError&) {
            // Not a spec: the first word is the program and `--` one of its arguments.
        }
    }
    out.command = std::move(words);
    return out;
}

// A file named `name` that exists on `path_list` (or at `name` itself when it has a folder) but
// is not executable: a directory or a file without the execute bit. Empty when there is none.
fs::path find_unrunnable(const std::string& name, const std::string& path_list) {
    std::error_code ec;
    fs::path given = fs::u8path(name);
    if (given.has_parent_path()) return fs::exists(given, ec) ? given : fs::path();
    for (const auto& dir : split_path_list(path_list, platform::host_os())) {
        if (dir.empty()) continue;
        fs::path candidate = fs::u8path(dir) / given;
        if (fs::is_regular_file(candidate, ec)) return candidate;
    }
    return {};
}

// A library of the selection that another user could change (a 0777 file in an imported
// toolkit) is loaded by whatever runs here: one warning line. The folders were checked already
// (trust.h); the shim, run before every tool, does not look at each library file.
void warn_changeable_libraries(const Layout& layout) {
    std::size_t count = 0;
    std::string first;
    for (const auto& dir : layout.lib_dirs) {
        std::error_code ec;
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
            auto meta = platform::file_meta(it->path()); // links followed: the file that loads
            if (!meta || meta->type != platform::FileMeta::Type::Regular) continue;
            Doubt d = doubt_of(*meta);
            if (d == Doubt::None) continue;
            if (count++ == 0)
                first = it->path().u8string() + " is " + doubt_words(d, *meta) + "; " +
                        doubt_fix(d, it->path(), *meta, false);
        }
    }
    if (count > 0)
        note("warning: another user could change a library this program may load: " + first +
             (count > 1 ? " (" + std::to_string(count - 1) + " more; `cvm verify` lists them)"
                        : ""));
}

// Whether the program `args[0]` is a spec (12, 11.8, 12.4+9, system) that names no program on
// PATH: the SPEC of `cvm exec SPEC -- CMD` typed without `--`.
bool spec_without_dashes(const std::vector<std::string>& args) {
    try {
        // A toolkit's name only where one is registered: otherwise a mistyped program's name.
        Spec s = parse_spec(args[0]);
        if (!s.name.empty() && !names_registered_toolkit(s.name)) return false;
    } catch (const SpecError&) {
        return false;
    }
    return !program_on_path(args[0]);
}

} // namespace

void register_exec(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "exec", "Run CMD in the selected environment; cvm exits with CMD's exit code. Forms: "
                "cvm exec [SPEC] -- CMD [ARGS...], cvm exec [--spec SPEC] CMD [ARGS...]");
    auto spec = std::make_shared<std::string>();
    auto version = std::make_shared<std::string>();
    auto unused = std::make_shared<std::string>();
    auto* spec_opt = cmd->add_option("--spec", *spec, "use this SPEC instead of the selection")
                         ->type_name("SPEC");
    cmd->add_option("--version", *version, "the same as --spec (kept for scripts)")
        ->type_name("SPEC")
        ->excludes(spec_opt);
    // CMD is never taken by CLI11: the positional refuses every word, so the first word that is
    // not one of cvm's options (and everything after it, `-h` and `--version` included) is left
    // for the callback exactly as typed (prefix_command). The positional still counts as
    // missing, which keeps a leading `--` here instead of handing it back to the main app.
    cmd->add_option("CMD", *unused,
                    "the program, then its arguments (nothing after CMD is read by cvm)")
        ->type_name("[ARGS...]")
        ->check(CLI::Validator([](std::string&) { return std::string("not parsed"); }, ""));
    cmd->validate_positionals();
    cmd->prefix_command();
    cmd->callback([spec, version, cmd] {
        std::vector<std::string> words = cmd->remaining();
        if (!words.empty() && words.front() != "--" && words.front().size() > 1 &&
            words.front()[0] == '-') {
            throw UsageError(unknown_option_line(*cmd, words.front(), "exec", "cvm help exec",
                                                 "cvm's options go before CMD"));
        }
        ExecWords w = split_exec_words(std::move(words));
        std::optional<std::string> chosen;
        if (!spec->empty()) chosen = *spec;
        if (!version->empty()) chosen = *version;
        if (w.spec) {
            if (chosen)
                throw UsageError("exec: two specs, " + printable(*chosen) + " and " +
                                 printable(*w.spec) +
                                 "; give one (cvm exec SPEC -- CMD or cvm exec --spec SPEC CMD)");
            chosen = w.spec;
        }
        const auto& args = w.command;
        if (args.empty())
            throw UsageError("exec: nothing to run; usage: cvm exec [SPEC] -- CMD [ARGS...] or "
                             "cvm exec [--spec SPEC] CMD [ARGS...]");
        // `cvm exec 11.8 nvcc --version`: a SPEC without the `--` that makes it one, rather than a
        // program of that name (none on PATH) and a "command not found" with the whole PATH.
        if (!chosen && spec_without_dashes(args)) {
            std::string rest;
            for (std::size_t i = 1; i < args.size(); ++i) rest += " " + printable(args[i]);
            throw UsageError("exec: '" + printable(args[0]) + "' is a spec, not a program: put `--` after it, " +
                             (args.size() > 1 ? "`cvm exec " + printable(args[0]) + " --" + rest + "`"
                                              : "e.g. `cvm exec " + printable(args[0]) + " -- nvcc --version`"));
        }
        Store store = open_store();
        Selection sel = current_selection(store, chosen);
        auto env = platform::environment();
        if (!(sel.origin != Selection::Origin::None && sel.spec.system)) {
            Resolved r = resolve_selection(store, sel);
            Layout layout;
            apply_changes(env, selection_changes(store, r, &layout));
            warn_changeable_libraries(layout);
        }
        std::string path;
        for (const auto& [k, v] : env)
            if (platform::env_name_equal(k, "PATH")) path = v;
        fs::path program = platform::find_executable(args[0], path);
        if (program.empty()) {
            fs::path other = find_unrunnable(args[0], path);
            if (!other.empty()) {
                note(printable(args[0]) + ": " + other.u8string() +
                     " is not an executable file (check its permissions: chmod +x)");
                throw ExitCode{126};
            }
            note(printable(args[0]) + ": command not found in the selected environment (PATH=" +
                 path + "); check the name, or run `cvm current` to see the selection");
            throw ExitCode{127};
        }
        platform::exec_replace(program, args, env);
    });
}

} // namespace cvm::cli
