#include "cli/cli_model.h"

#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>

#include <CLI/CLI.hpp>

#include "cli/context.h"
#include "text/ascii.h"
#include "activation/shims.h"
#include "platform/platform.h"

namespace cvm::cli {

namespace {

std::map<const CLI::App*, std::string>& forwarded() {
    static std::map<const CLI::App*, std::string> table;
    return table;
}

// "TEXT:{cuda,cudnn}" -> cuda, cudnn (CLI11 writes an IsMember check that way).
std::vector<std::string> choices_of(const std::string& type_name) {
    std::vector<std::string> out;
    auto open = type_name.find(":{");
    if (open == std::string::npos || type_name.back() != '}') return out;
    std::string list = type_name.substr(open + 2, type_name.size() - open - 3);
    size_t start = 0;
    while (start <= list.size()) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        if (comma > start) out.push_back(list.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

OptionModel option_model(const CLI::Option& opt) {
    OptionModel m;
    for (const auto& l : opt.get_lnames()) m.names.push_back("--" + l);
    for (const auto& s : opt.get_snames()) m.names.push_back("-" + s);
    if (m.names.empty()) m.positional = opt.get_name(true);
    std::string type = opt.get_type_name();
    m.choices = choices_of(type);
    type = type.substr(0, type.find(':'));
    if (opt.get_expected_max() > 0 && opt.get_type_size_max() > 0) { // not a flag
        if (type.empty() || type == "TEXT")
            m.value_name = ascii_upper(m.names.empty() ? m.positional : m.names.front().substr(m.names.front().find_first_not_of('-')));
        else if (type[0] == '[' && m.names.empty())
            m.value_name = ascii_upper(m.positional) + " " + type; // exec's "CMD [ARGS...]"
        else
            m.value_name = type;
    }
    m.description = opt.get_description();
    m.required = opt.get_required();
    m.repeats = opt.get_items_expected_max() > 1;
    return m;
}

CommandModel walk(const CLI::App& app, bool ask_companions) {
    CommandModel m;
    m.name = app.get_name();
    m.aliases = app.get_aliases();
    m.description = app.get_description();
    m.footer = app.get_footer();
    m.passthrough = app.get_prefix_command();
    for (const CLI::Option* opt : app.get_options()) {
        if (opt->get_group().empty()) continue; // hidden
        m.options.push_back(option_model(*opt));
    }
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); }))
        m.commands.push_back(describe(*sub, ask_companions));
    return m;
}

std::optional<CommandModel> companion_model(const std::string& companion, const std::string& name) {
    fs::path program = companion_program(companion);
    auto text = platform::capture_output(program, {program.u8string(), "__describe", name}, 5000);
    if (!text) return std::nullopt;
    try {
        auto m = nlohmann::json::parse(*text).get<CommandModel>();
        if (m.name != name) return std::nullopt;
        return m;
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
}

} // namespace

const CommandModel* CommandModel::command(const std::string& word) const {
    for (const auto& c : commands) {
        if (c.name == word) return &c;
        for (const auto& a : c.aliases)
            if (a == word) return &c;
    }
    return nullptr;
}

const OptionModel* CommandModel::option(const std::string& word) const {
    for (const auto& o : options)
        for (const auto& n : o.names)
            if (n == word) return &o;
    return nullptr;
}

std::vector<const OptionModel*> CommandModel::positionals() const {
    std::vector<const OptionModel*> out;
    for (const auto& o : options)
        if (o.is_positional()) out.push_back(&o);
    return out;
}

void forward_model(const CLI::App* command, std::string companion) {
    forwarded()[command] = std::move(companion);
}

const std::string* forwarded_to(const CLI::App* command) {
    auto it = forwarded().find(command);
    return it == forwarded().end() ? nullptr : &it->second;
}

CommandModel describe(const CLI::App& app, bool ask_companions) {
    auto it = forwarded().find(&app);
    if (ask_companions && it != forwarded().end()) {
        if (auto m = companion_model(it->second, app.get_name())) {
            m->aliases = app.get_aliases();
            return *m;
        }
    }
    return walk(app, ask_companions);
}

} // namespace cvm::cli
