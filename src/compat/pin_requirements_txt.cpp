// Requirements files' pins (requirements*.txt, and the lines of environment.yml's pip: list):
// one PEP 508 requirement a line, with comments, line continuations and -r/-c includes.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "compat/pin_requirement.h"
#include "compat/project_pins.h"
#include "compat/version_clauses.h"
#include "text/affixes.h"
#include "text/ascii.h"

namespace cvm::compat {

namespace {

// Calls `take` with each logical line of a requirements file that is not blank: comments ("#"
// at the start or after whitespace) cut, lines ending in "\" joined to the next, trimmed; with
// the number of its first line.
void for_each_logical_line(std::string_view text,
                           const std::function<void(std::string_view, unsigned)>& take) {
    unsigned number = 0;
    std::string logical;
    unsigned first = 0;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t nl = text.find('\n', pos);
        std::string_view raw = text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
        pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
        ++number;
        if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
        if (logical.empty()) first = number;
        // A comment: "#" at the start or after whitespace.
        for (size_t i = 0; i < raw.size(); ++i)
            if (raw[i] == '#' && (i == 0 || raw[i - 1] == ' ' || raw[i - 1] == '\t')) {
                raw = raw.substr(0, i);
                break;
            }
        if (!raw.empty() && raw.back() == '\\') {
            logical += std::string(raw.substr(0, raw.size() - 1));
            if (pos <= text.size()) continue;
        } else {
            logical += std::string(raw);
        }
        const std::string line(ascii_trim(logical));
        logical.clear();
        if (line.empty()) continue;
        take(line, first);
    }
}

// The file an option line includes (-r/-c FILE, --requirement/--constraint FILE or =FILE); ""
// for other options. Throws ProjectFileError for an include that names no file.
std::string_view included_name(std::string_view line, const std::string& file, unsigned first) {
    for (std::string_view opt : {"--requirement", "--constraint", "-r", "-c"}) {
        if (!starts_with(line, opt)) continue;
        std::string_view rest = line.substr(opt.size());
        if (!rest.empty() && rest.front() != '=' && rest.front() != ' ' && rest.front() != '\t' &&
            opt.size() > 2)
            continue;
        if (!rest.empty() && rest.front() == '=') rest.remove_prefix(1);
        std::string_view arg = ascii_trim(rest);
        if (arg.empty()) fail_at(file, first, std::string(opt) + " names no file");
        return arg;
    }
    return {};
}

// The requirement without the per-requirement options (--hash=..., --config-settings) that
// follow it.
std::string_view without_requirement_options(std::string_view line) {
    for (size_t i = 1; i + 2 < line.size(); ++i)
        if ((line[i - 1] == ' ' || line[i - 1] == '\t') && line[i] == '-' && line[i + 1] == '-')
            return ascii_trim(line.substr(0, i));
    return line;
}

} // namespace

std::vector<ProjectPin> requirements_pins(std::string_view text, const std::string& file,
                                          const IncludeReader& include) {
    std::vector<ProjectPin> out;
    for_each_logical_line(text, [&](std::string_view line, unsigned first) {
        if (line.front() == '-') {
            // An option line: -r/-c FILE are read (one level); --index-url, -e, -f ... are not.
            std::string_view arg = included_name(line, file, first);
            if (arg.empty() || !include) return;
            const std::string name(arg), where = file_line(file, first);
            auto included = include(name, where);
            if (!included)
                fail_at(file, first,
                        std::string(line) + ": " + name + " is not in the project folder");
            auto more = requirements_pins(*included, name, {});
            out.insert(out.end(), more.begin(), more.end());
            return;
        }
        if (auto pin = requirement_pin(without_requirement_options(line), file, first))
            out.push_back(std::move(*pin));
    });
    return out;
}

} // namespace cvm::compat
