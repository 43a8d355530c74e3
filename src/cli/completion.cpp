// `cvm __complete`: which command, option or value the word under the cursor is, from the
// command model; the values themselves come from completion_values.cpp.
#include "cli/completion.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "text/affixes.h"

namespace cvm::cli {

namespace {

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool is_option_word(const std::string& w) { return w.size() > 1 && w[0] == '-'; }

// One line, short enough for a menu.
std::string brief(std::string text) {
    for (char& c : text)
        if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    if (text.size() > 72) text = text.substr(0, 69) + "...";
    return text;
}

// The positional that the next plain word fills, given how many were typed.
const OptionModel* positional_slot(const CommandModel& cmd, size_t given) {
    size_t index = 0;
    for (const OptionModel* p : cmd.positionals()) {
        if (p->repeats || index == given) return p;
        ++index;
    }
    return nullptr;
}

Completion values_of(const OptionModel& option, const std::vector<std::string>& given, const std::string& current,
                     const std::string& lead) {
    ValueKind kind = value_kind(option);
    Completion out;
    if (kind == ValueKind::Choices) {
        for (const auto& c : option.choices) add_candidate(out, lead + c, "", lead + current);
        return out;
    }
    Completion found =
        kind == ValueKind::Shell ? shell_values(option.description, current) : dynamic_values(kind, given, current);
    out.directive = found.directive;
    for (auto& c : found.candidates) out.candidates.push_back({lead + c.value, brief(c.description)});
    return out;
}

} // namespace

void add_candidate(Completion& out, const std::string& value, const std::string& description, const std::string& prefix) {
    if (!starts_with(value, prefix)) return;
    for (const auto& c : out.candidates)
        if (c.value == value) return;
    out.candidates.push_back({value, brief(description)});
}

ValueKind value_kind(const OptionModel& o) {
    if (!o.choices.empty()) return ValueKind::Choices;
    std::set<std::string> names{lower(o.value_name), lower(o.positional)};
    for (const auto& n : o.names)
        if (starts_with(n, "--")) names.insert(lower(n.substr(2)));
    auto any = [&names](std::initializer_list<const char*> words) {
        for (const char* w : words)
            if (names.count(w)) return true;
        return false;
    };
    if (any({"spec"})) return ValueKind::Spec;
    if (any({"id", "ids"})) return ValueKind::Id;
    if (any({"shell"})) return ValueKind::Shell;
    if (any({"tool"})) return ValueKind::Tool;
    if (any({"cmd", "program"})) return ValueKind::Program;
    if (any({"dir", "folder", "directory", "layout"})) return ValueKind::Dir;
    if (any({"file", "output", "path"})) return ValueKind::File;
    if (any({"what"})) return ValueKind::InstallWhat;
    if (any({"cuda"})) return ValueKind::CudaVersion;
    if (any({"command"})) return ValueKind::CommandName;
    if (any({"for"})) return ValueKind::Framework;
    return ValueKind::None;
}

Completion complete_words(const CommandModel& root, std::vector<std::string> words) {
    if (words.empty()) words.emplace_back();
    std::string current = words.back();
    if (current == "\"\"") current.clear();
    words.pop_back();

    const CommandModel* cmd = &root;
    const OptionModel* pending = nullptr; // an option whose value comes next
    bool dashdash = false;
    std::vector<std::string> given; // positional words of `cmd`
    std::vector<const OptionModel*> used;
    size_t after_dashdash = 0;
    for (const std::string& w : words) {
        if (pending) {
            if (w != "=") pending = nullptr; // bash splits --shell=bash at '='
            continue;
        }
        if (dashdash) {
            ++after_dashdash;
            given.push_back(w);
            continue;
        }
        if (cmd->passthrough && !given.empty()) {
            given.push_back(w); // the program's own arguments
            continue;
        }
        if (w == "--") {
            dashdash = true;
            continue;
        }
        if (is_option_word(w)) {
            const OptionModel* opt = cmd->option(w.substr(0, w.find('=')));
            bool attached = w.find('=') != std::string::npos;
            if (!opt && w[1] != '-' && w.size() > 2) { // -oFILE
                opt = cmd->option(w.substr(0, 2));
                attached = true;
            }
            if (!opt) continue;
            used.push_back(opt);
            if (opt->takes_value() && !attached) pending = opt;
            continue;
        }
        if (given.empty()) {
            if (const CommandModel* sub = cmd->command(w)) {
                cmd = sub;
                used.clear();
                continue;
            }
        }
        given.push_back(w);
    }

    Completion out;
    if (pending) return values_of(*pending, given, current, "");
    if (cmd->passthrough) {
        // exec: cvm's options (a word starting with `-`, even `-` alone), then the program (first
        // after `--`), then the program's words.
        if ((dashdash && after_dashdash == 0) || (!dashdash && given.empty() && !starts_with(current, "-"))) {
            out.directive = "commands";
            // `cvm exec 12.4 -- CMD`: a word that starts like a version is the SPEC of --spec.
            const OptionModel* spec = nullptr;
            for (const auto& o : cmd->options)
                if (!o.is_positional() && value_kind(o) == ValueKind::Spec) spec = &o;
            if (spec && !dashdash && !current.empty() && std::isdigit(static_cast<unsigned char>(current[0])))
                out.candidates = values_of(*spec, given, current, "").candidates;
            return out;
        }
        if (!given.empty() || dashdash) {
            out.directive = "files";
            return out;
        }
    }
    if (!dashdash && starts_with(current, "--") && current.find('=') != std::string::npos) {
        std::string name = current.substr(0, current.find('='));
        const OptionModel* opt = cmd->option(name);
        if (!opt || !opt->takes_value()) return out;
        return values_of(*opt, given, current.substr(name.size() + 1), name + "=");
    }
    if (!dashdash && starts_with(current, "-")) {
        for (const auto& o : cmd->options) {
            if (o.is_positional()) continue;
            if (!o.repeats && std::find(used.begin(), used.end(), &o) != used.end()) continue;
            for (const auto& n : o.names) add_candidate(out, n, o.description, current);
        }
        return out;
    }
    if (given.empty() && !dashdash)
        for (const auto& c : cmd->commands) {
            add_candidate(out, c.name, c.description, current);
            for (const auto& a : c.aliases) add_candidate(out, a, c.description, current);
        }
    if (const OptionModel* slot = positional_slot(*cmd, given.size())) {
        Completion values;
        if (value_kind(*slot) == ValueKind::CommandName) {
            for (const auto& c : root.commands) add_candidate(values, c.name, c.description, current);
        } else {
            values = values_of(*slot, given, current, "");
        }
        out.directive = values.directive;
        for (auto& c : values.candidates) add_candidate(out, c.value, c.description, current);
    }
    return out;
}

std::string completion_answer(const CLI::App& app, const std::vector<std::string>& words) {
    Completion c = complete_words(describe(app, false), words);
    std::string text;
    for (const auto& cand : c.candidates) {
        if (cand.value.empty() || cand.value.find_first_of("\t\n\r") != std::string::npos) continue;
        text += cand.value;
        if (!cand.description.empty()) text += "\t" + cand.description;
        text += "\n";
    }
    return text + ":" + c.directive + "\n";
}

} // namespace cvm::cli
