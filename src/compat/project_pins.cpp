#include "compat/project_pins.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <toml++/toml.h>

#include "text/ascii.h"
#include "registry/registry.h"
#include "text/toml_input.h"

namespace cvm::compat {

const char* const kProjectFileNames =
    "requirements*.txt, pyproject.toml, environment.yml, pixi.toml, Pipfile";

namespace {

namespace fs = std::filesystem;
using Op = VersionClause::Op;


bool has_start(std::string_view s, std::string_view p) {
    return s.substr(0, p.size()) == p;
}

std::string at(const std::string& file, unsigned line) {
    return file + ":" + std::to_string(line);
}

[[noreturn]] void fail(const std::string& file, unsigned line, const std::string& what) {
    throw ProjectFileError(at(file, line) + ": " + what);
}

// Compares two versions as if the shorter had zeros added ("2.4" == "2.4.0").
int compare_padded(const Version& a, const Version& b) {
    const size_t n = std::max(a.parts.size(), b.parts.size());
    for (size_t i = 0; i < n; ++i) {
        unsigned x = i < a.parts.size() ? a.parts[i] : 0, y = i < b.parts.size() ? b.parts[i] : 0;
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

Version first_parts(const Version& v, size_t n) {
    Version out = v;
    out.parts.resize(std::min(n, v.parts.size()));
    return out;
}

// A PEP 440 version ("2.4.1", "2.4.0rc1", "2.4.1+cu121", "2.4.*"): its release numbers, with
// the local label and whether it ends in ".*". Pre-, post- and dev-release parts are dropped
// (a series is judged by its release numbers). nullopt when it is not such a version.
struct LooseVersion {
    Version release;
    std::string local;
    bool wildcard = false;
};

std::optional<LooseVersion> loose_version(std::string_view s) {
    LooseVersion out;
    s = ascii_trim(s);
    if (!s.empty() && (s.front() == 'v' || s.front() == 'V')) s.remove_prefix(1);
    if (s.size() >= 2 && s.substr(s.size() - 2) == ".*") {
        out.wildcard = true;
        s.remove_suffix(2);
    } else if (!s.empty() && s.back() == '*') { // conda's fuzzy "2.4*"
        out.wildcard = true;
        s.remove_suffix(1);
        if (!s.empty() && s.back() == '.') s.remove_suffix(1);
    }
    if (auto plus = s.find('+'); plus != std::string_view::npos) {
        out.local = ascii_lower(s.substr(plus + 1));
        s = s.substr(0, plus);
        if (out.local.empty()) return std::nullopt;
        for (char c : out.local)
            if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
                return std::nullopt;
    }
    size_t end = 0;
    while (end < s.size() && (std::isdigit(static_cast<unsigned char>(s[end])) || s[end] == '.'))
        ++end;
    std::string_view numbers = s.substr(0, end), rest = s.substr(end);
    if (!numbers.empty() && numbers.back() == '.' && !rest.empty()) numbers.remove_suffix(1);
    auto v = parse_version(numbers, 1, 6);
    if (!v) return std::nullopt;
    bool letter = false;
    for (char c : rest) {
        if (std::isalpha(static_cast<unsigned char>(c)))
            letter = true;
        else if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
            return std::nullopt;
    }
    if (!rest.empty() && !letter) return std::nullopt;
    out.release = *v;
    return out;
}

// The operator a clause starts with, longest first; "" when none.
std::string_view leading_op(std::string_view s) {
    for (std::string_view op : {"===", "~=", "==", "!=", "<=", ">=", "<", ">", "="})
        if (has_start(s, op)) return op;
    return {};
}

// One clause "OP VERSION" into `out`; `bare` is the operator of a clause without one ("" refuses
// it), `single_eq` what conda's "=" means. false when it cannot be read.
bool add_clause(std::string_view text, std::vector<VersionClause>& out, std::string* tag,
                std::string_view bare) {
    text = ascii_trim(text);
    std::string_view op = leading_op(text);
    if (op.empty()) {
        if (bare.empty()) return false;
        op = bare;
    } else {
        text.remove_prefix(op.size());
    }
    auto v = loose_version(text);
    if (!v) return false;
    if (!v->local.empty()) {
        if (op != "==" && op != "===") return false;
        if (tag) *tag = v->local;
    }
    if (op == "=") { // conda's "=2.4" is 2.4.*; PEP 440 has no "="
        if (bare.empty()) return false;
        v->wildcard = true;
    }
    if (op == "==" || op == "===" || op == "=") {
        out.push_back({v->wildcard ? Op::Prefix : Op::Equal, v->release});
    } else if (op == "!=") {
        out.push_back({v->wildcard ? Op::NotPrefix : Op::NotEqual, v->release});
    } else if (v->wildcard) {
        return false;
    } else if (op == "~=") {
        if (v->release.parts.size() < 2) return false;
        out.push_back({Op::GreaterEqual, v->release});
        out.push_back({Op::Prefix, first_parts(v->release, v->release.parts.size() - 1)});
    } else if (op == "<") {
        out.push_back({Op::Less, v->release});
    } else if (op == "<=") {
        out.push_back({Op::LessEqual, v->release});
    } else if (op == ">") {
        out.push_back({Op::Greater, v->release});
    } else {
        out.push_back({Op::GreaterEqual, v->release});
    }
    return true;
}

// A comma-separated PEP 440 specifier ("" or "*": any). nullopt when it cannot be read.
std::optional<std::vector<VersionClause>> pep440_clauses(std::string_view spec, std::string* tag,
                                                         std::string_view bare = {}) {
    std::vector<VersionClause> out;
    spec = ascii_trim(spec);
    if (spec.empty() || spec == "*") return out;
    while (true) {
        size_t comma = spec.find(',');
        if (!add_clause(spec.substr(0, comma), out, tag, bare)) return std::nullopt;
        if (comma == std::string_view::npos) break;
        spec.remove_prefix(comma + 1);
    }
    return out;
}

// A conda version spec ("2.4.1" exact, "2.4.*", "=2.4" (2.4.*), ">=2.4,<2.6", "*").
std::optional<std::vector<VersionClause>> conda_clauses(std::string_view spec) {
    if (spec.find('|') != std::string_view::npos) return std::nullopt;
    return pep440_clauses(spec, nullptr, "==");
}

// Poetry's constraint ("^2.4", "~2.4", ">=2.4,<2.6", ">=2.4 <2.6", "2.4.1", "*").
std::optional<std::vector<VersionClause>> poetry_clauses(std::string_view spec) {
    std::vector<VersionClause> out;
    if (spec.find("||") != std::string_view::npos || spec.find('|') != std::string_view::npos)
        return std::nullopt;
    // Clauses are separated by commas or spaces; an operator may be followed by a space.
    std::vector<std::string> parts;
    std::string cur;
    for (char c : spec) {
        const bool after_op =
            !cur.empty() && std::string_view("<>=!~^").find(cur.back()) != std::string_view::npos;
        if (c == ',' || (std::isspace(static_cast<unsigned char>(c)) && !after_op)) {
            if (!cur.empty()) parts.push_back(cur);
            cur.clear();
        } else if (!std::isspace(static_cast<unsigned char>(c))) {
            cur += c;
        }
    }
    if (!cur.empty()) parts.push_back(cur);
    for (const auto& p : parts) {
        if (p == "*") continue;
        const bool caret = p[0] == '^', tilde = p[0] == '~' && !has_start(p, "~=");
        if (caret || tilde) {
            auto v = loose_version(std::string_view(p).substr(1));
            if (!v || v->wildcard || !v->local.empty()) return std::nullopt;
            const auto& n = v->release.parts;
            size_t keep = 0; // the index of the number that is raised for the upper bound
            if (caret) {
                while (keep + 1 < n.size() && n[keep] == 0)
                    ++keep;
            } else {
                keep = n.size() >= 2 ? 1 : 0;
            }
            Version upper = first_parts(v->release, keep + 1);
            upper.parts.back() += 1;
            out.push_back({Op::GreaterEqual, v->release});
            out.push_back({Op::Less, upper});
            continue;
        }
        if (!add_clause(p, out, nullptr, "==")) return std::nullopt;
    }
    return out;
}

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

ProjectPin make_pin(std::string fw, std::string_view text, const std::string& file,
                    unsigned line) {
    ProjectPin pin;
    pin.framework = std::move(fw);
    pin.text = std::string(ascii_trim(text));
    pin.file = file;
    pin.line = line;
    return pin;
}

// The pin of one PEP 508 requirement naming a framework; nullopt for other packages.
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
            fail(file, line,
                 pin.text + ": cvm reads a version only from a wheel's file name in a URL; pin " +
                     r.name + "==VERSION");
        spec = "==" + v;
    }
    auto clauses = pep440_clauses(spec, &pin.cuda_tag);
    if (!clauses)
        fail(file, line,
             "cannot read the version range of " + pin.text + " (write e.g. " + r.name +
                 ">=2.4,<2.6 or " + r.name + "==2.4.1)");
    pin.clauses = std::move(*clauses);
    return pin;
}

// A conda dependency ("pytorch=2.4.1", "pytorch::pytorch >=2.4", "pytorch=2.4.1=py3.11_cuda12.1_0"):
// its name, version spec and build string.
struct CondaDep {
    std::string name, version, build;
};

CondaDep conda_dep(std::string_view s) {
    CondaDep d;
    s = ascii_trim(s);
    if (auto colons = s.find("::"); colons != std::string_view::npos) s = s.substr(colons + 2);
    size_t i = 0;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i])) &&
           std::string_view("=<>!~[").find(s[i]) == std::string_view::npos)
        ++i;
    d.name = std::string(s.substr(0, i));
    std::string_view rest = ascii_trim(s.substr(i));
    if (!rest.empty() && rest.front() == '=' && !has_start(rest, "==")) {
        // name=VERSION[=BUILD]
        rest.remove_prefix(1);
        auto eq = rest.find('=');
        d.version = "=" + std::string(ascii_trim(rest.substr(0, eq)));
        if (eq != std::string_view::npos) d.build = std::string(ascii_trim(rest.substr(eq + 1)));
        return d;
    }
    // name==VERSION=BUILD
    if (has_start(rest, "==")) {
        auto eq = rest.find('=', 2);
        if (eq != std::string_view::npos) {
            d.version = std::string(ascii_trim(rest.substr(0, eq)));
            d.build = std::string(ascii_trim(rest.substr(eq + 1)));
            return d;
        }
    }
    // name [SPEC [BUILD]]
    auto space = rest.find_first_of(" \t");
    d.version = std::string(rest.substr(0, space));
    if (space != std::string_view::npos) d.build = std::string(ascii_trim(rest.substr(space)));
    return d;
}

// The CUDA a conda build string names ("py3.11_cuda12.1_cudnn9.1.0_0" -> 12.1).
std::optional<Version> build_cuda(const std::string& build) {
    auto p = build.find("cuda");
    if (p == std::string::npos) return std::nullopt;
    size_t e = p + 4;
    while (e < build.size() && (std::isdigit(static_cast<unsigned char>(build[e])) || build[e] == '.'))
        ++e;
    auto v = parse_version(std::string_view(build).substr(p + 4, e - p - 4), 2, 3);
    if (!v) return std::nullopt;
    return first_parts(*v, 2);
}

// The CUDA a pytorch-cuda / cuda-version spec names ("12.1", "=12.1", "12.1.*").
std::optional<Version> spec_cuda(std::string_view spec) {
    auto clauses = conda_clauses(spec);
    if (!clauses || clauses->size() != 1) return std::nullopt;
    const auto& c = clauses->front();
    if ((c.op != Op::Equal && c.op != Op::Prefix) || c.version.parts.size() < 2)
        return std::nullopt;
    return first_parts(c.version, 2);
}

// Adds the pin of one conda dependency; a pytorch-cuda pin sets `cuda` (with its line).
void add_conda_dep(std::vector<ProjectPin>& out, std::string_view text, const CondaDep& d,
                   const std::string& file, unsigned line,
                   std::optional<std::pair<Version, unsigned>>& cuda) {
    const std::string name = ascii_lower(d.name);
    if (name == "pytorch-cuda") {
        auto v = spec_cuda(d.version);
        if (!v)
            fail(file, line,
                 "cannot read the CUDA version of " + std::string(ascii_trim(text)) +
                     " (write e.g. pytorch-cuda=12.1)");
        cuda = std::make_pair(*v, line);
        return;
    }
    std::string fw = framework_of(name);
    if (fw.empty()) return;
    ProjectPin pin = make_pin(fw, text, file, line);
    auto clauses = conda_clauses(d.version);
    if (!clauses)
        fail(file, line,
             "cannot read the version of " + pin.text + " (write e.g. " + d.name + "=2.4.1 or " +
                 d.name + ">=2.4,<2.6)");
    pin.clauses = std::move(*clauses);
    if (fw == "pytorch") pin.cuda = build_cuda(d.build);
    if (pin.cuda) pin.cuda_from = "its build string " + d.build;
    out.push_back(std::move(pin));
}

// pytorch-cuda=X of a file: the CUDA of its pytorch pins, or a pin of any torch built for it.
void apply_conda_cuda(std::vector<ProjectPin>& pins,
                      const std::optional<std::pair<Version, unsigned>>& cuda,
                      const std::string& file) {
    if (!cuda) return;
    bool any = false;
    const std::string from = "pytorch-cuda=" + cuda->first.str() + " from " + at(file, cuda->second);
    for (auto& p : pins)
        if (p.framework == "pytorch" && p.file == file) {
            if (!p.cuda) {
                p.cuda = cuda->first;
                p.cuda_from = from;
            }
            any = true;
        }
    if (!any) {
        ProjectPin pin = make_pin("pytorch", "pytorch-cuda=" + cuda->first.str(), file, cuda->second);
        pin.cuda = cuda->first;
        pin.cuda_from = from;
        pins.push_back(std::move(pin));
    }
}

// ---- TOML files --------------------------------------------------------------------------------

unsigned line_of(const toml::node& n) {
    return static_cast<unsigned>(n.source().begin.line);
}

// A list of PEP 508 strings (PEP 621 dependencies, a dependency group).
void pep508_array(std::vector<ProjectPin>& out, const toml::node* node, const std::string& file,
                  const std::string& key) {
    if (!node) return;
    const toml::array* a = node->as_array();
    if (!a) fail(file, line_of(*node), key + " is not a list of requirements");
    for (const auto& item : *a) {
        if (item.is_table()) continue; // a dependency group's {include-group = "..."}
        auto s = item.value<std::string>();
        if (!s) fail(file, line_of(item), key + " holds a value that is not a string");
        if (auto pin = requirement_pin(*s, file, line_of(item))) out.push_back(std::move(*pin));
    }
}

// A table NAME = VERSION-SPEC or NAME = { version = ... } (Poetry, Pipfile, pixi). `read` turns
// the spec text into clauses; a table without a version (a git or path source) is skipped.
using ReadSpec =
    std::function<std::optional<std::vector<VersionClause>>(const std::string&, ProjectPin&)>;

void name_table(std::vector<ProjectPin>& out, const toml::node* node, const std::string& file,
                const std::string& key, const ReadSpec& read, const char* example) {
    if (!node) return;
    const toml::table* t = node->as_table();
    if (!t) fail(file, line_of(*node), "[" + key + "] is not a table");
    for (const auto& [k, value] : *t) {
        const std::string name(k.str());
        std::string fw = framework_of(name);
        if (fw.empty()) continue;
        std::optional<std::string> spec = value.value<std::string>();
        const toml::node* where = &value;
        if (const toml::table* inline_table = value.as_table()) {
            const toml::node* v = inline_table->get("version");
            if (!v) continue;
            spec = v->value<std::string>();
            where = v;
        } else if (value.is_array()) {
            fail(file, line_of(value),
                 name + ": cvm reads one constraint per framework, not a list of them");
        }
        const unsigned line = line_of(*where);
        if (!spec) fail(file, line, name + "'s version is not a string");
        ProjectPin pin = make_pin(fw, name + " = \"" + *spec + "\"", file, line);
        auto clauses = read(*spec, pin);
        if (!clauses)
            fail(file, line,
                 "cannot read the version of " + pin.text + " (write e.g. " + name + " = \"" +
                     example + "\")");
        pin.clauses = std::move(*clauses);
        out.push_back(std::move(pin));
    }
}

// Pipfile and pixi PyPI versions: PEP 440, a bare version meaning ==.
std::optional<std::vector<VersionClause>> pypi_value(const std::string& spec, ProjectPin& pin) {
    return pep440_clauses(spec, &pin.cuda_tag, "==");
}

// ---- environment.yml ---------------------------------------------------------------------------
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

// A TOML file's pins in the order of its lines (toml++ keeps a table's keys sorted).
std::vector<ProjectPin> by_line(std::vector<ProjectPin> pins) {
    std::stable_sort(pins.begin(), pins.end(),
                     [](const ProjectPin& a, const ProjectPin& b) { return a.line < b.line; });
    return pins;
}

} // namespace

std::string ProjectPin::where() const {
    return at(file, line);
}

std::optional<Version> ProjectPin::exact() const {
    std::optional<Version> out;
    for (const auto& c : clauses)
        if (c.op == Op::Equal) out = c.version;
    return out;
}

bool series_allowed(const std::vector<VersionClause>& clauses, const Version& release) {
    for (const auto& c : clauses) {
        const Version& v = c.version;
        const Version mm = first_parts(v, 2);
        switch (c.op) {
        case Op::Equal:
            if (compare_padded(mm, release) != 0) return false;
            break;
        case Op::Prefix:
            if (v.parts.size() >= 2 ? compare_padded(mm, release) != 0 : !release.has_prefix(v))
                return false;
            break;
        case Op::NotEqual:
            break; // one release of the series at most
        case Op::NotPrefix:
            if (v.parts.size() == 1 ? release.has_prefix(v)
                                    : v.parts.size() == 2 && compare_padded(v, release) == 0)
                return false;
            break;
        case Op::Less:
            if (compare_padded(release, v) >= 0) return false;
            break;
        case Op::LessEqual:
            if (compare_padded(release, v) > 0) return false;
            break;
        case Op::Greater:
        case Op::GreaterEqual:
            if (compare_padded(release, mm) < 0) return false;
            break;
        }
    }
    return true;
}

std::string framework_of(std::string_view package_name) {
    std::string key = registry::framework_key(package_name);
    return key == "pytorch" || key == "tensorflow" || key == "jax" ? key : std::string();
}

std::vector<ProjectPin> requirements_pins(std::string_view text, const std::string& file,
                                          const IncludeReader& include) {
    std::vector<ProjectPin> out;
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
        std::string_view line = ascii_trim(logical);
        std::string keep(line);
        logical.clear();
        line = keep;
        if (line.empty()) continue;
        if (line.front() == '-') {
            // An option line: -r/-c FILE are read (one level); --index-url, -e, -f ... are not.
            std::string_view arg;
            for (std::string_view opt : {"--requirement", "--constraint", "-r", "-c"}) {
                if (!has_start(line, opt)) continue;
                std::string_view rest = line.substr(opt.size());
                if (!rest.empty() && rest.front() != '=' && rest.front() != ' ' &&
                    rest.front() != '\t' && opt.size() > 2)
                    continue;
                if (!rest.empty() && rest.front() == '=') rest.remove_prefix(1);
                arg = ascii_trim(rest);
                if (arg.empty()) fail(file, first, std::string(opt) + " names no file");
                break;
            }
            if (arg.empty() || !include) continue;
            const std::string name(arg), where = at(file, first);
            auto included = include(name, where);
            if (!included)
                fail(file, first, std::string(line) + ": " + name + " is not in the project folder");
            auto more = requirements_pins(*included, name, {});
            out.insert(out.end(), more.begin(), more.end());
            continue;
        }
        // Per-requirement options (--hash=..., --config-settings) follow the requirement.
        for (size_t i = 1; i + 2 < line.size(); ++i)
            if ((line[i - 1] == ' ' || line[i - 1] == '\t') && line[i] == '-' && line[i + 1] == '-') {
                line = ascii_trim(line.substr(0, i));
                break;
            }
        if (auto pin = requirement_pin(line, file, first)) out.push_back(std::move(*pin));
    }
    return out;
}

std::vector<ProjectPin> pyproject_pins(std::string_view text, const std::string& file) {
    toml::table root = parse_toml<ProjectFileError>(text, file, "");
    std::vector<ProjectPin> out;
    pep508_array(out, root.at_path("project.dependencies").node(), file, "[project] dependencies");
    if (const toml::table* optional = root.at_path("project.optional-dependencies").as_table())
        for (const auto& [k, v] : *optional)
            pep508_array(out, &v, file, "[project.optional-dependencies] " + std::string(k.str()));
    if (const toml::table* groups = root["dependency-groups"].as_table())
        for (const auto& [k, v] : *groups)
            pep508_array(out, &v, file, "[dependency-groups] " + std::string(k.str()));
    auto poetry = [](const std::string& spec, ProjectPin&) { return poetry_clauses(spec); };
    name_table(out, root.at_path("tool.poetry.dependencies").node(), file,
               "tool.poetry.dependencies", poetry, "^2.4");
    name_table(out, root.at_path("tool.poetry.dev-dependencies").node(), file,
               "tool.poetry.dev-dependencies", poetry, "^2.4");
    if (const toml::table* groups = root.at_path("tool.poetry.group").as_table())
        for (const auto& [k, v] : *groups)
            if (const toml::table* g = v.as_table())
                name_table(out, g->get("dependencies"), file,
                           "tool.poetry.group." + std::string(k.str()) + ".dependencies", poetry,
                           "^2.4");
    return by_line(std::move(out));
}

std::vector<ProjectPin> pipfile_pins(std::string_view text, const std::string& file) {
    toml::table root = parse_toml<ProjectFileError>(text, file, "");
    std::vector<ProjectPin> out;
    // [packages], [dev-packages] and any other category; [source], [requires], [pipenv] and
    // [scripts] hold no packages.
    for (const auto& [k, v] : root) {
        const std::string key(k.str());
        if (key == "source" || key == "requires" || key == "pipenv" || key == "scripts") continue;
        if (!v.is_table()) continue;
        name_table(out, &v, file, key, pypi_value, "==2.4.1");
    }
    return by_line(std::move(out));
}

std::vector<ProjectPin> pixi_pins(std::string_view text, const std::string& file) {
    toml::table root = parse_toml<ProjectFileError>(text, file, "");
    std::vector<ProjectPin> out;
    // [dependencies] and [pypi-dependencies], also under [feature.X] and [target.PLATFORM].
    std::function<void(const toml::table&, const std::string&)> walk =
        [&](const toml::table& t, const std::string& path) {
            std::optional<std::pair<Version, unsigned>> cuda;
            for (const auto& [k, v] : t) {
                const std::string key(k.str()), here = path.empty() ? key : path + "." + key;
                if (key == "dependencies") {
                    const toml::table* deps = v.as_table();
                    if (!deps) fail(file, line_of(v), "[" + here + "] is not a table");
                    for (const auto& [name, value] : *deps) {
                        const std::string n(name.str());
                        if (framework_of(n).empty() && ascii_lower(n) != "pytorch-cuda") continue;
                        CondaDep d{n, {}, {}};
                        const toml::node* spec = &value;
                        if (const toml::table* inline_table = value.as_table()) {
                            spec = inline_table->get("version");
                            if (auto b = inline_table->get_as<std::string>("build")) d.build = b->get();
                            if (!spec) {
                                if (d.build.empty()) continue; // a path or git source
                                spec = &value;
                                d.version = "*";
                            }
                        }
                        if (d.version.empty()) {
                            auto s = spec->value<std::string>();
                            if (!s) fail(file, line_of(*spec), n + "'s version is not a string");
                            d.version = *s;
                        }
                        add_conda_dep(out, n + " = \"" + d.version + "\"", d, file, line_of(*spec), cuda);
                    }
                } else if (key == "pypi-dependencies") {
                    name_table(out, &v, file, here, pypi_value, ">=2.4");
                } else if ((key == "feature" || key == "target" || path.rfind("feature", 0) == 0 ||
                            path.rfind("target", 0) == 0) &&
                           v.is_table()) {
                    walk(*v.as_table(), here);
                }
            }
            apply_conda_cuda(out, cuda, file);
        };
    walk(root, "");
    return by_line(std::move(out));
}

std::vector<ProjectPin> environment_pins(std::string_view text, const std::string& file,
                                         const IncludeReader& include) {
    std::vector<ProjectPin> out;
    std::optional<std::pair<Version, unsigned>> cuda;
    bool in_deps = false, in_pip = false;
    size_t item_indent = std::string::npos, pip_indent = 0;
    auto conda_item = [&](const std::string& item, unsigned line) {
        add_conda_dep(out, item, conda_dep(item), file, line, cuda);
    };
    unsigned number = 0;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t nl = text.find('\n', pos);
        std::string_view raw = text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
        ++number;
        if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
        std::string_view s = yaml_uncomment(raw);
        if (ascii_trim(s).empty()) continue;
        size_t indent = 0;
        while (indent < s.size() && s[indent] == ' ')
            ++indent;
        if (indent < s.size() && s[indent] == '\t')
            fail(file, number, "a tab in the indentation (YAML indents with spaces only)");
        std::string_view body = ascii_trim(s.substr(indent));
        if (has_start(body, "---") || has_start(body, "...")) continue;
        const bool item = body == "-" || has_start(body, "- ");
        if (indent == 0 && !item) {
            // A top-level key.
            in_pip = false;
            item_indent = std::string::npos;
            auto colon = body.find(':');
            if (colon == std::string_view::npos)
                fail(file, number, "expected `key:` at the start of the line");
            in_deps = ascii_trim(body.substr(0, colon)) == "dependencies";
            std::string_view value = ascii_trim(body.substr(colon + 1));
            if (!in_deps || value.empty()) continue;
            in_deps = false;
            if (value.front() != '[' || value.back() != ']')
                fail(file, number, "dependencies: is followed by a value that is not a list");
            value = value.substr(1, value.size() - 2);
            while (!ascii_trim(value).empty()) {
                auto comma = value.find(',');
                auto v = yaml_scalar(value.substr(0, comma));
                if (!v) fail(file, number, "an unterminated quote in the dependencies list");
                if (!v->empty()) conda_item(*v, number);
                if (comma == std::string_view::npos) break;
                value.remove_prefix(comma + 1);
            }
            continue;
        }
        if (!in_deps) continue;
        if (!item) {
            // `- pip:` may be followed by an indented non-list value only when it is a list
            fail(file, number, "expected a list item (`- NAME`) under dependencies:");
        }
        std::string_view value = ascii_trim(body.substr(1));
        auto scalar = yaml_scalar(value);
        if (!scalar) fail(file, number, "an unterminated quote");
        if (in_pip && indent > item_indent) {
            if (indent < pip_indent) fail(file, number, "the pip: list's items are not aligned");
            pip_indent = indent;
            auto pins = requirements_pins(*scalar, file, include);
            for (auto& p : pins) {
                if (p.file == file) p.line = number;
                out.push_back(std::move(p));
            }
            continue;
        }
        if (item_indent == std::string::npos) item_indent = indent;
        if (indent != item_indent)
            fail(file, number, "this item is indented unlike the dependencies: list's others");
        in_pip = false;
        if (!value.empty() && value.back() == ':' && ascii_trim(value.substr(0, value.size() - 1)) == "pip") {
            in_pip = true;
            pip_indent = 0;
            continue;
        }
        if (value.find(':') != std::string_view::npos && value.front() != '"' && value.front() != '\'' &&
            value.find("::") == std::string_view::npos)
            fail(file, number, "expected a package (`- NAME=VERSION`) or `- pip:`, got " + std::string(value));
        conda_item(*scalar, number);
    }
    apply_conda_cuda(out, cuda, file);
    return out;
}

std::vector<ProjectPin> read_project_pins(const fs::path& dir, std::vector<std::string>* read) {
    std::error_code ec;
    const fs::path base = fs::absolute(dir, ec);
    auto slurp = [](const fs::path& p, const std::string& shown) -> std::optional<std::string> {
        std::error_code e;
        if (!fs::is_regular_file(p, e)) return std::nullopt;
        if (fs::file_size(p, e) > 4u << 20)
            throw ProjectFileError(shown + ":1: larger than 4 MiB; not a project file cvm reads");
        std::ifstream in(p, std::ios::binary);
        if (!in) throw ProjectFileError(shown + ":1: cannot be read");
        std::ostringstream ss;
        ss << in.rdbuf();
        return ss.str();
    };
    // `-r NAME`: a file inside the folder, named relative to it.
    IncludeReader include = [&](const std::string& name,
                                const std::string& where) -> std::optional<std::string> {
        const fs::path rel = fs::u8path(name);
        bool outside = rel.is_absolute() || rel.has_root_name() || name.find("://") != std::string::npos;
        for (const auto& part : rel)
            if (part == "..") outside = true;
        if (outside)
            throw ProjectFileError(where + ": " + name +
                                   " is outside the project folder; cvm reads includes inside it only");
        return slurp(base / rel, name);
    };
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(base, ec)) {
        const std::string n = e.path().filename().u8string();
        if (n.rfind("requirements", 0) == 0 && n.size() >= 16 && n.substr(n.size() - 4) == ".txt")
            names.push_back(n);
    }
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
        if ((a == "requirements.txt") != (b == "requirements.txt")) return a == "requirements.txt";
        return a < b;
    });
    std::vector<ProjectPin> out;
    auto add = [&](const std::string& name, auto parse) {
        auto text = slurp(base / fs::u8path(name), name);
        if (!text) return;
        if (read) read->push_back(name);
        for (auto& p : parse(*text, name)) {
            const bool seen = std::any_of(out.begin(), out.end(), [&](const ProjectPin& q) {
                return q.file == p.file && q.line == p.line && q.text == p.text;
            });
            if (!seen) out.push_back(std::move(p));
        }
    };
    for (const auto& n : names)
        add(n, [&](std::string_view t, const std::string& f) { return requirements_pins(t, f, include); });
    add("pyproject.toml", pyproject_pins);
    bool yml = false;
    for (const char* n : {"environment.yml", "environment.yaml"})
        if (!yml && fs::is_regular_file(base / n, ec)) {
            yml = true;
            add(n, [&](std::string_view t, const std::string& f) { return environment_pins(t, f, include); });
        }
    add("pixi.toml", pixi_pins);
    add("Pipfile", pipfile_pins);
    return out;
}

} // namespace cvm::compat
