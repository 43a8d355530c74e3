#include "core/toml_input.h"

#include <cstdio>

namespace cvm {

namespace {

// Decodes one UTF-8 sequence at text[i]; returns its length, or 0 when it is not valid UTF-8
// (overlong forms, surrogates and values past U+10FFFF included).
std::size_t decode_utf8(std::string_view text, std::size_t i, char32_t& cp) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    std::size_t n = lead >= 0xF0 && lead <= 0xF4 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 && lead < 0xE0 ? 2 : 0;
    if (n == 0 || i + n > text.size()) return 0;
    cp = lead & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
    for (std::size_t k = 1; k < n; ++k) {
        if ((byte(i + k) & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (byte(i + k) & 0x3F);
    }
    const char32_t least = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
    if (cp < least || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

void append_escape(std::string& out, char32_t cp) {
    char buf[12];
    if (cp <= 0xFFFF) std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(cp));
    else std::snprintf(buf, sizeof buf, "\\U%08X", static_cast<unsigned>(cp));
    out += buf;
}

// Whether the table header opening at text[i] lacks its key: toml++ 3.3 asserts that past "[" or
// "[[" and blanks comes a key or "]" (a Debug build aborts on "[!]"; clang's Release build assumes
// it), so such a header is refused here.
bool header_lacks_key(std::string_view text, std::size_t i) {
    auto blanks = [&](std::size_t k) {
        while (k < text.size() && (text[k] == ' ' || text[k] == '\t')) ++k;
        return k;
    };
    std::size_t k = blanks(i + 1);
    if (k < text.size() && text[k] == '[') {
        if (k > i + 1) return false; // "[ [": toml++ reports it
        k = blanks(k + 1);
    }
    if (k == text.size()) return false; // toml++ reports the end of the file
    const char c = text[k];
    const bool bare = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    return !(bare || c == '"' || c == '\'' || c == ']');
}

} // namespace

std::optional<TomlInputProblem> ascii_toml(std::string_view text, std::string& out) {
    enum class In { Plain, Comment, Basic, Literal, MultiBasic, MultiLiteral } in = In::Plain;
    out.clear();
    out.reserve(text.size() + 16);
    int line = 1;
    // Outside strings and comments: the [ and { still open, the last character that is not blank,
    // and whether the line holds nothing else yet.
    std::string open;
    char last = '\n';
    bool line_start = true;
    auto at = [&](std::size_t k, std::string_view s) { return text.substr(k, s.size()) == s; };
    auto problem = [&](const char* what) { return TomlInputProblem{line, what}; };
    for (std::size_t i = at(0, "\xEF\xBB\xBF") ? 3 : 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n') ++line;
        if (static_cast<unsigned char>(c) >= 0x80) {
            if (in == In::Plain) return problem("a non-ASCII character outside quotes");
            if (in == In::MultiBasic || in == In::MultiLiteral)
                return problem("a non-ASCII character in a multi-line string");
            char32_t cp = 0;
            std::size_t n = decode_utf8(text, i, cp);
            if (n == 0) return problem("text that is not UTF-8");
            if (in != In::Comment) append_escape(out, cp); // a comment's letters are dropped
            i += n - 1;
            continue;
        }
        switch (in) {
        case In::Plain:
            if (c == '[' && line_start && open.empty() && header_lacks_key(text, i))
                return problem("a table header without a name (write [name] or [[name]])");
            // toml++ 3.3 asserts that an array's value does not start with "}".
            if (c == '}' && !open.empty() && open.back() == '[' && (last == '[' || last == ','))
                return problem("a '}' where an array expects a value or ']'");
            if (c == '\n') line_start = true;
            else if (c != ' ' && c != '\t') line_start = false;
            if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '#') last = c;
            if (c == '[' || c == '{') open.push_back(c);
            if ((c == ']' || c == '}') && !open.empty()) open.pop_back();
            if (c == '#') {
                in = In::Comment;
            } else if (c == '"' || c == '\'') {
                const bool multi = at(i, c == '"' ? "\"\"\"" : "'''");
                in = c == '"' ? (multi ? In::MultiBasic : In::Basic) : (multi ? In::MultiLiteral : In::Literal);
                if (multi) {
                    out.append(text.substr(i, 3));
                    i += 2;
                    continue;
                }
                out.push_back('"'); // a literal string is written as a basic one
                continue;
            }
            break;
        case In::Comment:
            if (c == '\n') {
                in = In::Plain;
                line_start = true;
            }
            break;
        case In::Basic:
            if (c == '\\' && i + 1 < text.size() && text[i + 1] != '\n') {
                if (static_cast<unsigned char>(text[i + 1]) >= 0x80)
                    return problem("a backslash before a non-ASCII character");
                out.push_back(c);
                out.push_back(text[++i]);
                continue;
            }
            if (c == '"' || c == '\n') in = In::Plain; // at a line break toml++ reports the open string
            break;
        case In::Literal:
            if (c == '\'') {
                out.push_back('"');
                in = In::Plain;
                continue;
            }
            if (c == '\\' || c == '"') out.push_back('\\');
            if (c == '\n') in = In::Plain;
            break;
        case In::MultiBasic:
        case In::MultiLiteral:
            if (in == In::MultiBasic && c == '\\' && i + 1 < text.size() && text[i + 1] != '\n' &&
                static_cast<unsigned char>(text[i + 1]) < 0x80) {
                out.push_back(c);
                out.push_back(text[++i]);
                continue;
            }
            if (at(i, in == In::MultiBasic ? "\"\"\"" : "'''")) {
                out.append(text.substr(i, 3));
                i += 2;
                in = In::Plain;
                continue;
            }
            break;
        }
        out.push_back(c);
    }
    return std::nullopt;
}

} // namespace cvm
