// The version ranges of project pins as clauses (compat/version_clauses.h), and what a range
// admits (series_allowed and ProjectPin::exact, declared in compat/project_pins.h).
#include "compat/version_clauses.h"

#include <algorithm>
#include <cctype>

#include "text/affixes.h"
#include "text/ascii.h"

namespace cvm::compat {

namespace {

using Op = VersionClause::Op;

// Compares two versions as if the shorter had zeros added ("2.4" == "2.4.0").
int compare_padded(const Version& a, const Version& b) {
    const size_t n = std::max(a.parts.size(), b.parts.size());
    for (size_t i = 0; i < n; ++i) {
        unsigned x = i < a.parts.size() ? a.parts[i] : 0, y = i < b.parts.size() ? b.parts[i] : 0;
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

// The operator a clause starts with, longest first; "" when none.
std::string_view leading_op(std::string_view s) {
    for (std::string_view op : {"===", "~=", "==", "!=", "<=", ">=", "<", ">", "="})
        if (starts_with(s, op)) return op;
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

} // namespace

Version first_parts(const Version& v, size_t n) {
    Version out = v;
    out.parts.resize(std::min(n, v.parts.size()));
    return out;
}

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

std::optional<std::vector<VersionClause>> pep440_clauses(std::string_view spec, std::string* tag,
                                                         std::string_view bare) {
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

std::optional<std::vector<VersionClause>> conda_clauses(std::string_view spec) {
    if (spec.find('|') != std::string_view::npos) return std::nullopt;
    return pep440_clauses(spec, nullptr, "==");
}

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
        const bool caret = p[0] == '^', tilde = p[0] == '~' && !starts_with(p, "~=");
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

} // namespace cvm::compat
