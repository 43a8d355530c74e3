// The pin of one PEP 508 requirement, and the place and errors every project file reader shares
// (compat/pin_requirement.h); ProjectPin::where.
#include "compat/pin_requirement.h"

#include <cctype>

#include "compat/version_clauses.h"
#include "text/ascii.h"

namespace cvm::compat {

namespace {

// A PEP 508 requirement: name, extras, and the specifier or URL after them. false when the text
// does not start with a name (a path, a URL alone).
struct Requirement {
    std::string name;
    std::string spec;
    bool url = false;
};

bool pep508(std::string_view s, Requirement& out) {
    s = ascii_trim(s);
    if (auto semi = s.find(';'); semi != std::string_view::npos) s = ascii_trim(s.substr(0, semi));
    size_t i = 0;
    if (s.empty() || !std::isalnum(static_cast<unsigned char>(s[0]))) return false;
    while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '.' ||
                            s[i] == '_' || s[i] == '-'))
        ++i;
    out.name = std::string(s.substr(0, i));
    std::string_view rest = ascii_trim(s.substr(i));
    if (!rest.empty() && rest.front() == '[') {
        auto close = rest.find(']');
        if (close == std::string_view::npos) return false;
        rest = ascii_trim(rest.substr(close + 1));
    }
    if (!rest.empty() && rest.front() == '@') {
        out.url = true;
        rest = ascii_trim(rest.substr(1));
    } else if (rest.size() >= 2 && rest.front() == '(' && rest.back() == ')') {
        rest = ascii_trim(rest.substr(1, rest.size() - 2));
    }
    out.spec = std::string(rest);
    return true;
}

// The version of a wheel's file name at the end of a URL ("torch-2.4.1%2Bcu121-cp311-...whl").
std::string wheel_url_version(const std::string& url) {
    std::string name = url.substr(url.rfind('/') + 1);
    if (name.size() < 4 || ascii_lower(name.substr(name.size() - 4)) != ".whl") return {};
    for (size_t p; (p = ascii_lower(name).find("%2b")) != std::string::npos;)
        name.replace(p, 3, "+");
    auto a = name.find('-');
    if (a == std::string::npos) return {};
    auto b = name.find('-', a + 1);
    return b == std::string::npos ? std::string() : name.substr(a + 1, b - a - 1);
}

} // namespace

std::string file_line(const std::string& file, unsigned line) {
    return file + ":" + std::to_string(line);
}

std::string ProjectPin::where() const {
    return file_line(file, line);
}

void fail_at(const std::string& file, unsigned line, const std::string& what) {
    throw ProjectFileError(file_line(file, line) + ": " + what);
}

ProjectPin make_pin(std::string fw, std::string_view text, const std::string& file, unsigned line) {
    ProjectPin pin;
    pin.framework = std::move(fw);
    pin.text = std::string(ascii_trim(text));
    pin.file = file;
    pin.line = line;
    return pin;
}

std::optional<ProjectPin> requirement_pin(std::string_view text, const std::string& file,
                                          unsigned line) {
    Requirement r;
    if (!pep508(text, r)) return std::nullopt;
    std::string fw = framework_of(r.name);
    if (fw.empty()) return std::nullopt;
    ProjectPin pin = make_pin(fw, text, file, line);
    if (auto semi = pin.text.find(';'); semi != std::string::npos)
        pin.text = std::string(ascii_trim(std::string_view(pin.text).substr(0, semi)));
    std::string spec = r.spec;
    if (r.url) {
        std::string v = wheel_url_version(spec);
        if (v.empty())
            fail_at(file, line,
                    pin.text +
                        ": cvm reads a version only from a wheel's file name in a URL; pin " +
                        r.name + "==VERSION");
        spec = "==" + v;
    }
    auto clauses = pep440_clauses(spec, &pin.cuda_tag);
    if (!clauses)
        fail_at(file, line,
                "cannot read the version range of " + pin.text + " (write e.g. " + r.name +
                    ">=2.4,<2.6 or " + r.name + "==2.4.1)");
    pin.clauses = std::move(*clauses);
    return pin;
}

} // namespace cvm::compat
