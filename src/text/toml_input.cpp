#include "text/toml_input.h"

#include <cstdio>
#include <utility>
#include <vector>

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

} // namespace

std::string toml_error_words(std::string_view description) {
    std::string out(description);
    if (out.find("nested value depth") != std::string::npos)
        return "values nested more than 256 deep";
    // " (TOML_SOMETHING)": a macro of the library, meaningless to whoever wrote the file.
    for (std::size_t at; (at = out.find(" (TOML_")) != std::string::npos;) {
        std::size_t end = out.find(')', at);
        out.erase(at, end == std::string::npos ? std::string::npos : end - at + 1);
    }
    return out;
}

namespace {

void append_escape(std::string& out, char32_t cp) {
    char buf[12];
    if (cp <= 0xFFFF) std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(cp));
    else std::snprintf(buf, sizeof buf, "\\U%08X", static_cast<unsigned>(cp));
    out += buf;
}

// Input that reaches one of toml++ 3.3's assertions instead of an error (a Debug build aborts;
// clang's Release build optimizes on the assumption), watched outside strings and comments.
class AssertedShapes {
public:
    // The problem at text[i], a character outside strings and comments that lands at out[out_at].
    const char* plain(std::string_view text, std::size_t i, std::size_t out_at, int line) {
        const char c = text[i];
        const bool header = c == '[' && line_start_ && open_.empty();
        if (header && header_lacks_key(text, i))
            return "a table header without a name (write [name] or [[name]])";
        const bool in_array = !open_.empty() && open_.back() == '[' && !in_header_;
        if (c == '}' && in_array && (last_ == '[' || last_ == ','))
            return "a '}' where an array expects a value or ']'";
        if (c >= '0' && c <= '9' && (last_ == '=' || (in_array && (last_ == '[' || last_ == ','))))
            values_.emplace_back(out_at, line);
        if (c == '\n') line_start_ = true;
        else if (c != ' ' && c != '\t') line_start_ = false;
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '#') last_ = c;
        if (open_.empty()) in_header_ = header;
        if (c == '[' || c == '{') open_.push_back(c);
        if ((c == ']' || c == '}') && !open_.empty()) open_.pop_back();
        return nullptr;
    }
    void line_break() { line_start_ = true; }
    // Once `out`, the text toml++ gets, is complete: a value that starts with a digit.
    std::optional<TomlInputProblem> values(std::string_view out) const {
        for (const auto& [at, line] : values_)
            if (date_then_lone_digit(out, at))
                return TomlInputProblem{line, "a date followed by a lone digit (a time is written HH:MM:SS)"};
        return std::nullopt;
    }

private:
    // Past "[" or "[[" and blanks, toml++ asserts that a key or "]" follows.
    static bool header_lacks_key(std::string_view text, std::size_t i) {
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
    // Ten characters (underscores aside) with '-' 5th and 8th, a space, a digit and the value's
    // end: toml++ scans on for the rest of a time and asserts that there is more.
    static bool date_then_lone_digit(std::string_view out, std::size_t at) {
        auto ends_value = [](char c) {
            return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f' || c == ']' || c == '}' ||
                   c == ',' || c == '#';
        };
        std::string chars;
        std::size_t k = at;
        for (; k < out.size() && !ends_value(out[k]) && chars.size() <= 10; ++k)
            if (out[k] != '_') chars.push_back(out[k]);
        return chars.size() == 10 && chars[4] == '-' && chars[7] == '-' && k + 2 < out.size() && out[k] == ' ' &&
               out[k + 1] >= '0' && out[k + 1] <= '9' && ends_value(out[k + 2]);
    }

    std::string open_;        // the [ and { still open
    char last_ = '\n';        // the last character that is not blank
    bool line_start_ = true;  // nothing but blanks yet on this line
    bool in_header_ = false;  // within a table header's brackets
    std::vector<std::pair<std::size_t, int>> values_; // (where in out, line) of values that start with a digit
};

} // namespace

std::optional<TomlInputProblem> ascii_toml(std::string_view text, std::string& out) {
    enum class In { Plain, Comment, Basic, Literal, MultiBasic, MultiLiteral } in = In::Plain;
    out.clear();
    out.reserve(text.size() + 16);
    int line = 1;
    AssertedShapes shapes;
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
            if (const char* what = shapes.plain(text, i, out.size(), line)) return problem(what);
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
                shapes.line_break();
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
    return shapes.values(out);
}

} // namespace cvm
