#include "cli/manpage.h"

#include "cli/usage.h"

namespace cvm::cli {

namespace {

// Text as roff shows it: backslashes and dashes escaped, no line read as a request.
std::string roff(const std::string& text) {
    std::string out;
    bool line_start = true;
    for (char c : text) {
        if (line_start && (c == '.' || c == '\'')) out += "\\&";
        if (c == '\\')
            out += "\\e";
        else if (c == '-')
            out += "\\-";
        else
            out += c;
        line_start = c == '\n';
    }
    return out;
}

std::string bold(const std::string& s) { return "\\fB" + roff(s) + "\\fR"; }
std::string italic(const std::string& s) { return "\\fI" + roff(s) + "\\fR"; }

bool is_help(const OptionModel& o) {
    for (const auto& n : o.names)
        if (n == "--help") return true;
    return false;
}

std::string synopsis(const std::string& path, const CommandModel& cmd) {
    std::string out = ".B " + roff(path) + "\n";
    for (const auto& o : cmd.options) {
        if (o.is_positional() || is_help(o)) continue;
        std::string item = bold(o.names.front());
        if (o.takes_value()) item += " " + italic(o.value_name);
        out += "[" + item + "]\n";
    }
    if (!cmd.commands.empty()) out += italic("COMMAND") + "\n";
    for (const auto& o : cmd.options) {
        if (!o.is_positional()) continue;
        std::string item = italic(o.value_name.empty() ? o.positional : o.value_name);
        if (o.repeats) item += "...";
        out += (o.required ? item : "[" + item + "]") + "\n";
    }
    return out;
}

std::string option_list(const CommandModel& cmd) {
    std::string out;
    for (const auto& o : cmd.options) {
        out += ".TP\n";
        if (o.is_positional()) {
            out += italic(o.value_name.empty() ? o.positional : o.value_name) + "\n";
        } else {
            std::string names;
            for (const auto& n : o.names) names += (names.empty() ? "" : ", ") + bold(n);
            if (o.takes_value()) names += " " + italic(o.value_name);
            out += names + "\n";
        }
        std::string text = o.description;
        if (!o.choices.empty()) {
            std::string list;
            for (const auto& c : o.choices) list += (list.empty() ? "" : ", ") + c;
            text += (text.empty() ? "" : " ") + ("(one of " + list + ")");
        }
        out += roff(text) + "\n";
    }
    return out;
}

std::string literal_block(const std::string& text) {
    if (text.empty()) return {};
    return ".PP\n.nf\n" + roff(text) + (text.back() == '\n' ? "" : "\n") + ".fi\n";
}

void commands_section(std::string& out, const std::string& parent, const CommandModel& cmd) {
    for (const auto& sub : cmd.commands) {
        std::string path = parent + " " + sub.name;
        out += ".SS \"" + roff(path) + "\"\n";
        out += synopsis(path, sub);
        out += ".PP\n" + roff(sub.description) + "\n";
        if (!sub.aliases.empty()) {
            std::string list;
            for (const auto& a : sub.aliases) list += (list.empty() ? "" : ", ") + bold(parent + " " + a);
            out += ".PP\nAlso: " + list + ".\n";
        }
        if (!sub.options.empty()) out += ".RS\n" + option_list(sub) + ".RE\n";
        out += literal_block(sub.footer);
        commands_section(out, path, sub);
    }
}

// Variables the man page names beyond the help's few (docs/cli-contract.md has them all).
const std::vector<HelpItem>& man_variables() {
    static const std::vector<HelpItem> items{
        {"CVM_STORE_PATH", "read-only stores searched after CVM_ROOT, a list as PATH is (also config.toml's store_path)"},
        {"CVM_CONFIG", "the user's config.toml (default $XDG_CONFIG_HOME/cvm/config.toml); empty: none"},
        {"CVM_SYSTEM_CONFIG", "the machine's config.toml (default /etc/cvm/config.toml); empty: none"},
        {"CVM_PYTHON", "the Python whose frameworks doctor, use --for and probe --python look at (else the active "
                       "virtual environment's, else python3 on PATH)"},
        {"CVM_HOST_COMPILER", "auto or off: whether cvm hands a supported host compiler to nvcc"},
        {"CVM_PROGRESS", "plain: progress as lines even on a terminal; none: no progress"},
        {"CVM_CONNECT_TIMEOUT, CVM_STALL_TIMEOUT, CVM_RETRIES, CVM_RETRY_DELAY_MS",
         "how downloads wait, give up and retry"},
        {"CVM_ALLOW_HTTP", "1: allow plain http:// to hosts other than this machine"},
        {"CVM_PROBE_PYTHON_TIMEOUT", "seconds cvm probe --python gives each framework's check (default 300)"},
        {"CVM_ACTIVE, CUDA_PATH, CUDA_HOME, PATH, LD_LIBRARY_PATH",
         "set by cvm for the programs it starts: the combination, its toolkit and its libraries"},
    };
    return items;
}

const std::vector<HelpItem>& man_files() {
    static const std::vector<HelpItem> items{
        {".cudaversion", "a project's selection, read from the current folder upward (cvm use writes it)"},
        {"$CVM_ROOT/version", "the global default (cvm use -g writes it)"},
        {"$CVM_ROOT/cuda, cudnn, nccl", "the installed and imported toolkits, cuDNN and NCCL builds"},
        {"$CVM_ROOT/views", "merged views of a toolkit with its cuDNN and NCCL"},
        {"$CVM_ROOT/shims", "the shims that run the selected toolkit's programs (put it first on PATH)"},
        {"$CVM_ROOT/cache", "downloaded archives and the registry overlay (cvm cache clean empties it)"},
        {"$XDG_CONFIG_HOME/cvm/config.toml, /etc/cvm/config.toml", "the user's and the machine's settings"},
        {"cvm.lock", "a project's exact toolchains and archive checksums (cvm lock, cvm install --locked)"},
    };
    return items;
}

} // namespace

std::string render_man(const CommandModel& root) {
    std::string out;
    out += ".\\\" cvm(1), generated by `cvm __man` from cvm's command-line definition: do not edit.\n";
    out += ".TH CVM 1 \"\" \"cvm " CVM_VERSION_STRING "\" \"User Commands\"\n.nh\n"; // option names unbroken
    std::string summary = root.description; // "cvm: side-by-side ..."
    if (auto colon = summary.find(": "); colon != std::string::npos) summary = summary.substr(colon + 2);
    out += ".SH NAME\ncvm \\- " + roff(summary) + "\n";
    out += ".SH SYNOPSIS\n" + synopsis("cvm", root) + italic("ARGS") + "...\n";
    out += ".SH DESCRIPTION\ncvm keeps " + roff(summary) + ".\n";
    out += ".PP\nA spec selects a combination: " + italic("CUDA") + "[+" + italic("CUDNN") +
           "] (12, 11.2, 12.4.1+9, 11.2+8.1.0.77), or " + bold("system") + ". The nearest " + bold(".cudaversion") +
           " from the current folder upward selects one for a project; " + bold("cvm use -g") +
           " sets the global default.\n";
    out += ".SH OPTIONS\n" + option_list(root);
    out += ".SH COMMANDS\n";
    commands_section(out, "cvm", root);
    out += ".SH ENVIRONMENT\n";
    for (const auto& v : help_variables()) out += ".TP\n" + bold(v.text) + "\n" + roff(v.meaning) + "\n";
    for (const auto& v : man_variables()) out += ".TP\n" + bold(v.text) + "\n" + roff(v.meaning) + "\n";
    out += ".SH FILES\n";
    for (const auto& f : man_files()) out += ".TP\n" + bold(f.text) + "\n" + roff(f.meaning) + "\n";
    out += ".SH EXIT STATUS\n.TP\n0\nsuccess\n.TP\n1\nthe operation failed, or doctor and probe found a problem\n"
           ".TP\n2\nbad usage or bad input\n";
    out += ".SH EXAMPLES\n";
    for (const auto& e : help_examples()) out += ".TP\n" + bold(e.text) + "\n" + roff(e.meaning) + "\n";
    return out;
}

} // namespace cvm::cli
