#include "cli/help_format.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <memory>
#include <sstream>

#include "text/ascii.h"
#include "platform/platform.h"

namespace cvm::cli {

namespace {

// Where a wrapped line goes on: after a table's gap of two or more spaces, else under the
// line's first letter.
std::size_t hanging_indent(const std::string& line) {
    std::size_t text = line.find_first_not_of(' ');
    if (text == std::string::npos) return 0;
    std::size_t gap = line.find("  ", text);
    if (gap != std::string::npos) {
        std::size_t next = line.find_first_not_of(' ', gap);
        if (next != std::string::npos && next < line.size() / 2 + 8) return next;
    }
    return text;
}

std::string wrap_line(const std::string& line, std::size_t width) {
    if (line.size() <= width) return line;
    // A table's row (an example: "  cvm export --oci DIR ...  what it does") whose first column
    // leaves too little room beside it: the command on a line of its own, whole (never broken in
    // the middle, so it can be copied), what it does below it, indented.
    const std::size_t text = line.find_first_not_of(' ');
    const std::size_t gap = text == std::string::npos ? text : line.find("  ", text);
    const std::size_t next = gap == std::string::npos ? gap : line.find_first_not_of(' ', gap);
    if (next != std::string::npos && next + 20 > width)
        return line.substr(0, gap) + "\n" + wrap_line(std::string(text + 4, ' ') + line.substr(next), width);
    std::size_t indent = hanging_indent(line);
    if (indent + 20 > width) indent = 0;
    std::string out;
    std::size_t start = 0;
    std::size_t room = width;
    while (line.size() - start > room) {
        std::size_t cut = line.rfind(' ', start + room);
        if (cut == std::string::npos || cut <= start + (start == 0 ? indent : 0)) {
            cut = line.find(' ', start + room); // a word longer than the room: keep it whole
            if (cut == std::string::npos) break;
        }
        out += line.substr(start, cut - start) + "\n" + std::string(indent, ' ');
        start = line.find_first_not_of(' ', cut);
        if (start == std::string::npos) return out;
        room = width - indent;
    }
    return out + line.substr(start);
}

// CLI11's own names of value types ("TEXT", "UINT", "TEXT:{cuda,cudnn}", "UINT:UINT in [1 - 1000]"):
// not words of cvm's help, which names a value by what it is.
bool stock_type_name(const std::string& type) {
    std::string head = type.substr(0, type.find(':'));
    static const char* const stock[] = {"TEXT", "INT", "UINT", "FLOAT", "NUMBER", "BOOLEAN", "FLOAT64"};
    for (const char* s : stock)
        if (head == s) return true;
    return head.empty() || type.find(':') != std::string::npos;
}

// A help in cvm's words: values named by what they are (`--shell SHELL`, `SPEC`, `ID...`), no
// CLI11 type names, REQUIRED or Excludes, "Arguments" and "Commands" for CLI11's "Positionals"
// and "Subcommands"; every line wrapped to the width asked for.
class WrappingFormatter : public CLI::Formatter {
public:
    explicit WrappingFormatter(std::size_t columns) : columns_(columns) {
        label("Positionals", "Arguments");
        label("SUBCOMMAND", "COMMAND");
        label("SUBCOMMANDS", "COMMANDS");
    }

    std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
        return is_positional ? ascii_upper(opt->get_name(true, false)) : opt->get_name(false, true);
    }
    std::string make_option_opts(const CLI::Option* opt) const override {
        if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
        if (opt->get_expected_max() == 0) return ""; // a flag
        const std::string& type = opt->get_type_name();
        if (!stock_type_name(type)) return " " + type; // "--spec SPEC", "CMD [ARGS...]"
        if (opt->get_positional()) // its name says what it is
            return opt->get_expected_max() == CLI::detail::expected_max_vector_size ? "..." : "";
        std::string name = opt->get_lnames().empty() ? opt->get_snames().front() : opt->get_lnames().front();
        return " " + ascii_upper(name);
    }
    std::string make_option_usage(const CLI::Option* opt) const override {
        std::string name = make_option_name(opt, true);
        if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) name += "...";
        return opt->get_required() ? name : "[" + name + "]";
    }

    std::string make_description(const CLI::App* app) const override {
        return wrap_text(CLI::Formatter::make_description(app), columns_);
    }
    std::string make_footer(const CLI::App* app) const override {
        return wrap_text(CLI::Formatter::make_footer(app), columns_);
    }
    std::string make_option_desc(const CLI::Option* opt) const override {
        return wrap_text(opt->get_description(), description_width());
    }
    std::string make_subcommand(const CLI::App* sub) const override {
        std::stringstream out;
        CLI::detail::format_help(out, sub->get_display_name(true), wrap_text(sub->get_description(), description_width()),
                                 get_column_width());
        return out.str();
    }

private:
    std::size_t description_width() const {
        return columns_ > get_column_width() + 20 ? columns_ - get_column_width() : 20;
    }
    std::size_t columns_;
};

} // namespace

std::string wrap_text(const std::string& text, std::size_t width) {
    std::string out;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        out += wrap_line(text.substr(start, end - start), width);
        if (end < text.size()) out += "\n";
        start = end + 1;
    }
    return out;
}

std::size_t help_columns() {
    if (auto columns = platform::get_env("COLUMNS")) {
        try {
            int n = std::stoi(*columns);
            if (n >= 40 && n <= 1000) return static_cast<std::size_t>(n);
        } catch (const std::exception&) {
        }
    }
    int n = platform::terminal_columns(1);
    return n > 0 ? static_cast<std::size_t>(std::max(n, 40)) : 80;
}

void wrap_help(CLI::App& app, std::size_t columns) {
    app.formatter(std::make_shared<WrappingFormatter>(columns));
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) wrap_help(*sub, columns);
}

} // namespace cvm::cli
