#include "wheel_metadata.h"

#include <cctype>

namespace cvm::doctor {

namespace {

std::string_view trim_spaces(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

// The version of the clause starting with `op` in a comma-separated specifier, when there is one.
std::optional<std::string> clause_version(std::string_view specifier, std::string_view op) {
    while (!specifier.empty()) {
        const auto comma = specifier.find(',');
        std::string_view clause = trim_spaces(specifier.substr(0, comma));
        specifier =
            comma == std::string_view::npos ? std::string_view() : specifier.substr(comma + 1);
        if (clause.substr(0, op.size()) != op) continue;
        clause = trim_spaces(clause.substr(op.size()));
        if (!clause.empty() && std::isdigit(static_cast<unsigned char>(clause.front())))
            return std::string(clause);
    }
    return std::nullopt;
}

// The specifier of a requirement without its marker: "nvidia-cudnn-cu12[x] (>=9.1)" gives ">=9.1".
// The name runs to the first character of the specifier, of "[extras]" or of "(...)".
std::string requirement_specifier(std::string_view requirement) {
    const auto at = requirement.find_first_of("<>=!~[( ");
    if (at == std::string_view::npos) return {};
    std::string_view rest = requirement.substr(at);
    if (rest.front() == '[') {
        const auto close = rest.find(']');
        rest = close == std::string_view::npos ? std::string_view() : rest.substr(close + 1);
    }
    rest = trim_spaces(rest);
    if (!rest.empty() && rest.front() == '(' && rest.back() == ')')
        rest = rest.substr(1, rest.size() - 2);
    return std::string(trim_spaces(rest));
}

} // namespace

std::optional<std::string> metadata_requirement(std::string_view metadata,
                                                std::string_view name_prefix) {
    constexpr std::string_view kHeader = "Requires-Dist:";
    std::size_t pos = 0;
    while (pos < metadata.size()) {
        const auto eol = metadata.find('\n', pos);
        std::string_view line = metadata.substr(
            pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
        pos = eol == std::string_view::npos ? metadata.size() : eol + 1;
        if (trim_spaces(line).empty()) break; // the headers end; the description follows
        if (line.substr(0, kHeader.size()) != kHeader) continue;
        line = trim_spaces(line.substr(kHeader.size()));
        if (line.substr(0, name_prefix.size()) != name_prefix) continue;
        line = line.substr(0, line.find(';')); // the environment marker
        return requirement_specifier(line);
    }
    return std::nullopt;
}

std::optional<std::string> specifier_pin(std::string_view specifier) {
    if (specifier.find("===") != std::string_view::npos) return std::nullopt;
    return clause_version(specifier, "==");
}

std::optional<std::string> specifier_floor(std::string_view specifier) {
    if (auto floor = clause_version(specifier, ">=")) return floor;
    return specifier_pin(specifier);
}

} // namespace cvm::doctor
