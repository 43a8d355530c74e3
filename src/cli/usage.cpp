#include "cli/usage.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>

#include <CLI/CLI.hpp>

#include "cli/context.h"
#include "cli/help_format.h"
#include "text/suggest.h"

namespace cvm::cli {

namespace {

// What to type for a command whose required argument is missing.
const std::map<std::string, std::string>& examples() {
    static const std::map<std::string, std::string> table{
        {"uninstall", "cvm uninstall 12.4.1"},
        {"which", "cvm which nvcc"},
        {"export", "cvm export lmod ~/modulefiles"},
        {"init", "cvm init bash"},
        {"script", "cvm script 11.2 --shell cmd"},
        {"env", "cvm env --shell bash"},
        {"completions", "cvm completions bash"},
    };
    return table;
}

CLI::App* find_command(CLI::App& app, const std::string& name) {
    auto found = app.get_subcommands([&name](CLI::App* sub) { return sub->check_name(name); });
    return found.empty() ? nullptr : found.front();
}

// Commands of pyenv, mise, nvm and asdf that cvm has under another name: what to run instead.
const std::map<std::string, std::string>& other_tools_commands() {
    static const std::map<std::string, std::string> table{
        {"versions", "to list what is installed, run `cvm list` (see cvm help list)"},
        {"version", "to show the selection here, run `cvm current`; cvm's own version: `cvm --version`"},
        {"local", "to select a version for this folder, run `cvm use SPEC` (writes .cudaversion; see cvm help use)"},
        {"global", "to select the default version, run `cvm use --global SPEC` (see cvm help use)"},
        {"ls-remote", "to list what cvm can install, run `cvm list --available` (see cvm help list)"},
        {"activate", "to activate the selection in this shell, run `eval \"$(cvm env)\"` or `cvm shell SPEC`; "
                     "for every new shell, put `cvm init SHELL` in its rc file (see cvm help init)"},
    };
    return table;
}

// `word` names no command of `app` (cvm itself, or a command with commands: `cvm cache clen`).
std::string unknown_command(CLI::App& app, const std::string& word, const std::string& who = "cvm",
                            const std::string& see = "cvm help") {
    if (app.get_parent() == nullptr) {
        auto habit = other_tools_commands().find(word);
        if (habit != other_tools_commands().end())
            return who + ": unknown command '" + word + "'; " + habit->second;
    }
    std::vector<std::string> names;
    for (CLI::App* sub : app.get_subcommands([](CLI::App* s) { return !s->get_name().empty(); })) {
        names.push_back(sub->get_name());
        for (const auto& alias : sub->get_aliases()) names.push_back(alias);
    }
    auto guess = closest_match(word, names);
    return who + ": unknown command '" + word + "'" + (guess ? "; did you mean '" + *guess + "'?" : "") +
           " (see " + see + ")";
}

bool has_commands(CLI::App& app) {
    return !app.get_subcommands([](CLI::App* s) { return !s->get_group().empty(); }).empty();
}

std::vector<std::string> visible_option_names(CLI::App& cmd) {
    std::vector<std::string> names;
    for (const CLI::Option* opt : cmd.get_options()) {
        if (opt->get_group().empty()) continue; // hidden
        for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
        for (const auto& s : opt->get_snames()) names.push_back("-" + s);
    }
    return names;
}

// The name a person sees: SPEC for a positional, --shell for an option.
std::string shown_name(const CLI::Option& opt) {
    if (opt.nonpositional()) {
        if (!opt.get_lnames().empty()) return "--" + opt.get_lnames().front();
        return "-" + opt.get_snames().front();
    }
    std::string name = opt.get_name(true);
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return name;
}

// The option a CLI11 message is about ("--shell: 1 required TEXT missing", "kind: foo not in
// {cuda,cudnn}", "Could not convert: --x = y", "Expected exactly 1 arguments to spec, got 2").
CLI::Option* option_in_message(CLI::App& cmd, const std::string& message) {
    for (CLI::Option* opt : cmd.get_options()) {
        std::vector<std::string> names{opt->get_name(true)};
        for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
        for (const auto& s : opt->get_snames()) names.push_back("-" + s);
        for (const auto& n : names) {
            if (n.empty()) continue;
            if (message.rfind(n + ":", 0) == 0 || message.find(": " + n + " =") != std::string::npos ||
                message.find(" to " + n + ",") != std::string::npos || message.rfind(n + " ", 0) == 0)
                return opt;
        }
    }
    return nullptr;
}

// "1 to 1000" for an option checked by CLI::Range (whose description reads "UINT in [1 - 1000]").
std::optional<std::string> accepted_range(CLI::Option& opt) {
    for (int i = 0;; ++i) {
        const CLI::Validator* v = nullptr;
        try {
            v = opt.get_validator(i);
        } catch (const CLI::OptionNotFound&) {
            return std::nullopt;
        }
        if (v == nullptr) return std::nullopt;
        std::string d = v->get_description();
        auto open = d.find(" in ["), dash = d.find(" - "), close = d.rfind(']');
        if (open != std::string::npos && dash != std::string::npos && close != std::string::npos && dash < close)
            return d.substr(open + 5, dash - open - 5) + " to " + d.substr(dash + 3, close - dash - 3);
    }
}

// -q/--quiet before or after the command name (`cvm -q install`, `cvm install -q`).
void add_quiet(CLI::App& cmd) {
    if (!cmd.get_option_no_throw("--quiet") && !cmd.get_option_no_throw("-q"))
        cmd.add_flag("-q,--quiet", quiet_flag(), "print no progress and no hints");
    for (CLI::App* sub : cmd.get_subcommands([](CLI::App*) { return true; })) add_quiet(*sub);
}

std::string help_footer() {
    return examples_text(help_examples(), 28) + "\nEnvironment:\n" + items_text(help_variables(), 13);
}

} // namespace

std::string unknown_option_line(CLI::App& cmd, const std::string& typed, const std::string& who,
                                const std::string& see, const std::string& note) {
    const std::string word = printable(typed.substr(0, typed.find('=')));
    // `pyenv install --list` / `-l`, `mise install --list`... in cvm's words.
    if (cmd.get_name() == "install" && (word == "--list" || word == "-l"))
        return who + ": unknown option '" + word + "'; to list what cvm can install, run `cvm list --available` (see cvm help list)";
    auto guess = closest_match(word, visible_option_names(cmd));
    if (guess) return who + ": unknown option '" + word + "'; did you mean '" + *guess + "'?" + (note.empty() ? "" : " (" + note + ")");
    return who + ": unknown option '" + word + "'; " + (note.empty() ? "" : note + "; ") + "see " + see;
}

const std::vector<HelpItem>& help_examples() {
    static const std::vector<HelpItem> items{
        {"cvm install 12.4+9", "install CUDA 12.4 and a cuDNN 9 built for it"},
        {"cvm use 12.4+9", "select them for this folder (writes .cudaversion)"},
        {"cvm exec -- nvcc --version", "run a command with the selection"},
        {"eval \"$(cvm env)\"", "activate the selection in this shell"},
        {"cvm help use", "the help of one command"},
    };
    return items;
}

const std::vector<HelpItem>& help_variables() {
    static const std::vector<HelpItem> items{
        {"CVM_ROOT", "the store (default $XDG_DATA_HOME/cvm, else ~/.local/share/cvm)"},
        {"CVM_VERSION", "a spec that overrides .cudaversion files and the global default"},
        {"CVM_MIRROR", "a base URL to use instead of https://developer.download.nvidia.com/compute"},
        {"NO_COLOR", "when set and not empty, nothing is coloured"},
    };
    return items;
}

// Help in cvm's words: "show this help" (not CLI11's "Print this help message and exit"), and
// "Commands" for CLI11's "Subcommands".
void describe_help(CLI::App& cmd) {
    if (CLI::Option* h = cmd.get_help_ptr()) h->description("show this help");
    for (CLI::App* sub : cmd.get_subcommands([](CLI::App*) { return true; })) {
        if (sub->get_group() == "Subcommands") sub->group("Commands");
        describe_help(*sub);
    }
}

// A flag takes no value: `--global=3` is refused, not read as on (CLI11 would take any number).
static void refuse_flag_values(CLI::App& app) {
    for (CLI::Option* opt : app.get_options())
        if (opt->nonpositional() && opt->get_expected_max() == 0) opt->disable_flag_override();
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) refuse_flag_values(*sub);
}

void describe_app(CLI::App& app) {
    refuse_flag_values(app);
    add_quiet(app);
    add_command_examples(app, "");
    for (auto [name, alias] : {std::pair{"list", "ls"}, std::pair{"uninstall", "rm"}})
        if (CLI::App* cmd = find_command(app, name)) cmd->alias(alias);
    auto* help = app.add_subcommand("help", "Show this help, or the help of one command (cvm help use)");
    help->add_option("command")->description("the command to describe");
    help->callback([&app] { std::fputs(app.help().c_str(), stdout); });
    app.footer(help_footer());
    describe_help(app);
    wrap_help(app, help_columns());
}

std::optional<int> answer_help(CLI::App& app, std::vector<std::string>& args) {
    if (args.empty() ||
        (args[0] == "help" && (args.size() == 1 || args[1] == "help" || args[1] == "--help" || args[1] == "-h"))) {
        std::fputs(app.help().c_str(), stdout);
        return 0;
    }
    if (args[0] != "help") return std::nullopt;
    CLI::App* cmd = find_command(app, args[1]);
    if (!cmd) {
        std::fprintf(stderr, "%s\n", unknown_command(app, args[1]).c_str());
        return 2;
    }
    std::vector<std::string> asked{cmd->get_name()};
    // `cvm help cache clean`: a command's own command.
    if (args.size() > 2 && has_commands(*cmd)) {
        CLI::App* sub = find_command(*cmd, args[2]);
        if (!sub) {
            std::fprintf(stderr, "%s\n",
                         unknown_command(*cmd, args[2], "cvm " + cmd->get_name(), "cvm help " + cmd->get_name()).c_str());
            return 2;
        }
        asked.push_back(sub->get_name());
    }
    asked.push_back("--help");
    args = std::move(asked);
    return std::nullopt;
}

std::string parse_error_line(CLI::App& app, const CLI::ParseError& error, const std::vector<std::string>& args) {
    CLI::App* cmd = &app;
    std::vector<CLI::App*> chain; // the commands typed, outermost first (`cache`, `clean`)
    while (!cmd->get_subcommands().empty()) chain.push_back(cmd = cmd->get_subcommands().front());
    const bool top = cmd == &app;
    std::string who = "cvm";
    for (const CLI::App* c : chain) who += " " + c->get_name();
    const std::string see = top ? "cvm help" : "cvm help " + chain.front()->get_name();

    // What nothing took: an unknown option first, then an unknown command or an extra argument.
    // A word after `--` that no positional takes is left with an outer command: look there too.
    std::vector<std::string> left = cmd->remaining();
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        CLI::App* outer = (*it)->get_parent();
        if (outer == nullptr) continue;
        for (const std::string& item : outer->remaining(false))
            if (std::find(left.begin(), left.end(), item) == left.end()) left.push_back(item);
    }
    bool after_dashes = false;
    for (const std::string& item : left) {
        if (item == "--") after_dashes = true;
        if (after_dashes || item.size() < 2 || item[0] != '-') continue;
        return unknown_option_line(*cmd, item, who, see);
    }
    // `--` itself is no argument: name the first word after it (or `--` when nothing follows).
    auto extra = std::find_if(left.begin(), left.end(), [](const std::string& w) { return w != "--"; });
    if (extra == left.end() && !left.empty()) extra = left.begin();
    if (extra != left.end()) {
        if (top) return unknown_command(app, *extra);
        if (has_commands(*cmd) && *extra != "--") return unknown_command(*cmd, *extra, who, see);
        return who + ": unexpected argument '" + *extra + "'; see " + see;
    }

    const std::string message = error.what();
    if (dynamic_cast<const CLI::RequiredError*>(&error)) {
        for (const CLI::Option* opt : cmd->get_options()) {
            if (!opt->get_required() || opt->count() > 0) continue;
            auto example = examples().find(cmd->get_name());
            return who + ": missing " + shown_name(*opt) +
                   (!top && example != examples().end() ? "; e.g. " + example->second : "; see " + see);
        }
        if (top) return "cvm: missing command (see cvm help)";
    }
    CLI::Option* opt = option_in_message(*cmd, message);
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) && !opt) {
        // A hidden option has no name in CLI11's message: the last option typed is the one.
        for (auto it = args.rbegin(); it != args.rend() && !opt; ++it)
            if (it->size() > 1 && (*it)[0] == '-')
                for (CLI::Option* o : cmd->get_options())
                    if (o->nonpositional() && o->check_name(it->substr(0, it->find('=')))) opt = o;
    }
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) && opt) {
        if (opt->nonpositional() && opt->get_expected_max() == 0) // a flag: `--global=3`
            return who + ": " + shown_name(*opt) + " takes no value; see " + see;
        if (opt->nonpositional() && opt->count() == 0)
            return who + ": " + shown_name(*opt) + " needs a value; see " + see;
        const int most = opt->get_expected_max();
        return who + ": " + shown_name(*opt) + " takes " +
               (most == 1 ? std::string("one value")
                          : "at most " + std::to_string(most) + " values") +
               "; see " + see;
    }
    if ((dynamic_cast<const CLI::ValidationError*>(&error) || dynamic_cast<const CLI::ConversionError*>(&error)) &&
        opt) {
        if (opt->nonpositional() && opt->get_expected_max() == 0) // a flag: `--json=x`
            return who + ": " + shown_name(*opt) + " takes no value; see " + see;
        std::string value = opt->results().empty() ? std::string() : opt->results().back();
        if (value.empty()) { // a conversion error names it ("Could not convert: --max = abc")
            auto eq = message.rfind(" = ");
            if (eq != std::string::npos) value = message.substr(eq + 3);
        }
        std::string line = who + ": '" + value + "' is not a valid " + shown_name(*opt);
        if (auto range = accepted_range(*opt)) line += " (a whole number from " + *range + ")";
        else if (!opt->get_description().empty()) line += " (" + opt->get_description() + ")";
        return line + "; see " + see;
    }
    // Kinds cvm's commands do not use yet: "A excludes B", "A requires B", and the rest.
    for (auto [cli11, ours] : {std::pair{" excludes ", " cannot be used with "}, std::pair{" requires ", " needs "}}) {
        auto at = message.find(cli11);
        if (at != std::string::npos)
            return who + ": " + message.substr(0, at) + ours + message.substr(at + std::string(cli11).size()) +
                   "; see " + see;
    }
    return who + ": " + message + "; see " + see;
}

std::string error_line(CLI::App& app, const std::string& message) {
    // The head before the first ": " must be a command, then its options or subcommands only.
    auto colon = message.find(": ");
    std::vector<std::string> head;
    if (colon != std::string::npos) {
        std::string words = message.substr(0, colon);
        for (size_t pos = 0; pos <= words.size();) {
            size_t end = words.find(' ', pos);
            if (end == std::string::npos) end = words.size();
            head.push_back(words.substr(pos, end - pos));
            pos = end + 1;
        }
    }
    CLI::App* cmd = head.empty() || head.front().empty() ? nullptr : find_command(app, head.front());
    bool ours = cmd != nullptr;
    for (size_t i = 1; ours && i < head.size(); ++i)
        ours = (head[i].size() > 1 && head[i][0] == '-') || find_command(*cmd, head[i]) != nullptr;
    return (ours ? "cvm " : "cvm: ") + message;
}

} // namespace cvm::cli
