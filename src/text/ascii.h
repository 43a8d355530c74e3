#pragma once
// ASCII-only text helpers, the same whatever the C locale says (URLs, file names, escapes).
#include <cctype>
#include <string>
#include <string_view>

namespace cvm {

// `s` with A-Z made a-z.
inline std::string ascii_lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// `s` with a-z made A-Z.
inline std::string ascii_upper(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

// `s` without the blanks (space, tab, line ends) at either end.
inline std::string_view ascii_trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

// The value of one hex digit (0-9, a-f, A-F); -1 for any other character.
inline int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

} // namespace cvm
