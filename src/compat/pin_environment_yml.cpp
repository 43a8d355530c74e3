// environment.yml's pins (conda packages and the pip: list), read from the small part of YAML
// such files use.
#include <string>
#include <string_view>
#include <vector>

#include "compat/pin_conda.h"
#include "compat/pin_requirement.h"
#include "compat/project_pins.h"
#include "compat/version_clauses.h"
#include "text/affixes.h"
#include "text/ascii.h"

namespace cvm::compat {

namespace {

// No YAML library is among cvm's dependencies: the small part of YAML environment files use is
// read by hand. Top-level keys at column 0; `dependencies:` followed by a block list ("- item",
// at any indentation, also at the key's own) or a flow list on its line ("[a, b]"); an item
// "pip:" holds a further-indented list of pip requirement lines. Comments (# at a line's start or
// after a space) and quotes around items are handled; tabs in indentation are refused, as YAML
// refuses them; everything else outside `dependencies` is not looked at.

std::string_view yaml_uncomment(std::string_view s) {
    char quote = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (quote) {
            if (c == quote) quote = 0;
        } else if (c == '\'' || c == '"') {
            if (i == 0 || s[i - 1] == ' ' || s[i - 1] == '-' || s[i - 1] == '[' || s[i - 1] == ',')
                quote = c;
        } else if (c == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
            return s.substr(0, i);
        }
    }
    return s;
}

// A scalar: unquoted, or in matching quotes. nullopt for an unterminated quote.
std::optional<std::string> yaml_scalar(std::string_view s) {
    s = ascii_trim(s);
    if (!s.empty() && (s.front() == '"' || s.front() == '\'')) {
        if (s.size() < 2 || s.back() != s.front()) return std::nullopt;
        return std::string(s.substr(1, s.size() - 2));
    }
    return std::string(s);
}

// What environment_pins knows between lines: where it is in the file (in `dependencies:`, in its
// `- pip:` item) and the pins so far.
class EnvironmentReader {
public:
    EnvironmentReader(const std::string& file, const IncludeReader& include)
        : file_(file), include_(include) {}

    // One line without its line end, numbered from 1.
    void line(std::string_view raw, unsigned number) {
        std::string_view s = yaml_uncomment(raw);
        if (ascii_trim(s).empty()) return;
        size_t indent = 0;
        while (indent < s.size() && s[indent] == ' ')
            ++indent;
        if (indent < s.size() && s[indent] == '\t')
            fail_at(file_, number, "a tab in the indentation (YAML indents with spaces only)");
        std::string_view body = ascii_trim(s.substr(indent));
        if (starts_with(body, "---") || starts_with(body, "...")) return;
        const bool item = body == "-" || starts_with(body, "- ");
        if (indent == 0 && !item) {
            top_level_key(body, number);
            return;
        }
        if (!in_deps_) return;
        if (!item) {
            // `- pip:` may be followed by an indented non-list value only when it is a list
            fail_at(file_, number, "expected a list item (`- NAME`) under dependencies:");
        }
        list_item(body, indent, number);
    }

    std::vector<ProjectPin> pins() {
        apply_conda_cuda(out_, cuda_, file_);
        return std::move(out_);
    }

private:
    void conda_item(const std::string& item, unsigned number) {
        add_conda_dep(out_, item, conda_dep(item), file_, number, cuda_);
    }

    // A top-level key; `dependencies:` starts its block list, or holds a flow list on its line.
    void top_level_key(std::string_view body, unsigned number) {
        in_pip_ = false;
        item_indent_ = std::string::npos;
        auto colon = body.find(':');
        if (colon == std::string_view::npos)
            fail_at(file_, number, "expected `key:` at the start of the line");
        in_deps_ = ascii_trim(body.substr(0, colon)) == "dependencies";
        std::string_view value = ascii_trim(body.substr(colon + 1));
        if (!in_deps_ || value.empty()) return;
        in_deps_ = false;
        if (value.front() != '[' || value.back() != ']')
            fail_at(file_, number, "dependencies: is followed by a value that is not a list");
        flow_list(value.substr(1, value.size() - 2), number);
    }

    // The items of `dependencies: [a, b]`, between the brackets.
    void flow_list(std::string_view value, unsigned number) {
        while (!ascii_trim(value).empty()) {
            auto comma = value.find(',');
            auto v = yaml_scalar(value.substr(0, comma));
            if (!v) fail_at(file_, number, "an unterminated quote in the dependencies list");
            if (!v->empty()) conda_item(*v, number);
            if (comma == std::string_view::npos) break;
            value.remove_prefix(comma + 1);
        }
    }

    // "- ITEM" under dependencies: a conda package, `- pip:`, or an item of the pip: list.
    void list_item(std::string_view body, size_t indent, unsigned number) {
        std::string_view value = ascii_trim(body.substr(1));
        auto scalar = yaml_scalar(value);
        if (!scalar) fail_at(file_, number, "an unterminated quote");
        if (in_pip_ && indent > item_indent_) {
            if (indent < pip_indent_)
                fail_at(file_, number, "the pip: list's items are not aligned");
            pip_indent_ = indent;
            auto pins = requirements_pins(*scalar, file_, include_);
            for (auto& p : pins) {
                if (p.file == file_) p.line = number;
                out_.push_back(std::move(p));
            }
            return;
        }
        if (item_indent_ == std::string::npos) item_indent_ = indent;
        if (indent != item_indent_)
            fail_at(file_, number, "this item is indented unlike the dependencies: list's others");
        in_pip_ = false;
        if (!value.empty() && value.back() == ':' &&
            ascii_trim(value.substr(0, value.size() - 1)) == "pip") {
            in_pip_ = true;
            pip_indent_ = 0;
            return;
        }
        if (value.find(':') != std::string_view::npos && value.front() != '"' &&
            value.front() != '\'' && value.find("::") == std::string_view::npos)
            fail_at(file_, number,
                    "expected a package (`- NAME=VERSION`) or `- pip:`, got " + std::string(value));
        conda_item(*scalar, number);
    }

    const std::string& file_;
    const IncludeReader& include_;
    std::vector<ProjectPin> out_;
    CondaCuda cuda_;
    bool in_deps_ = false, in_pip_ = false;
    size_t item_indent_ = std::string::npos, pip_indent_ = 0;
};

} // namespace

std::vector<ProjectPin> environment_pins(std::string_view text, const std::string& file,
                                         const IncludeReader& include) {
    EnvironmentReader reader(file, include);
    unsigned number = 0;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t nl = text.find('\n', pos);
        std::string_view raw = text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
        ++number;
        if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
        reader.line(raw, number);
    }
    return reader.pins();
}

} // namespace cvm::compat
