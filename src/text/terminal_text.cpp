#include "text/terminal_text.h"

#include <cstdio>

namespace cvm {

namespace {

// The length of the UTF-8 sequence at text[i] and its code point; 0 when it is not one.
std::size_t utf8_at(std::string_view text, std::size_t i, unsigned& cp) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    std::size_t n = lead >= 0xF0 && lead <= 0xF4   ? 4
                    : lead >= 0xE0 && lead <= 0xEF ? 3
                    : lead >= 0xC2 && lead <= 0xDF ? 2
                                                   : 0;
    if (n == 0 || i + n > text.size()) return 0;
    cp = lead & (n == 2 ? 0x1Fu : n == 3 ? 0x0Fu : 0x07u);
    for (std::size_t k = 1; k < n; ++k) {
        if ((byte(i + k) & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (byte(i + k) & 0x3Fu);
    }
    const unsigned least = n == 2 ? 0x80u : n == 3 ? 0x800u : 0x10000u;
    if (cp < least || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

// The length of a colour sequence (ESC [ 0;1;31 m) at text[i]; 0 when there is none.
std::size_t color_at(std::string_view text, std::size_t i) {
    if (i + 2 >= text.size() || text[i] != '\x1b' || text[i + 1] != '[') return 0;
    std::size_t k = i + 2;
    while (k < text.size() && ((text[k] >= '0' && text[k] <= '9') || text[k] == ';'))
        ++k;
    return k < text.size() && text[k] == 'm' ? k + 1 - i : 0;
}

} // namespace

std::string escape_controls(std::string_view text, bool keep_newlines, bool keep_colors) {
    std::string out;
    out.reserve(text.size());
    char buf[12];
    for (std::size_t i = 0; i < text.size();) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if (std::size_t n = keep_colors ? color_at(text, i) : 0) {
            out.append(text.substr(i, n));
            i += n;
            continue;
        }
        if (c < 0x80) {
            if ((c < 0x20 && !(keep_newlines && c == '\n')) || c == 0x7f) {
                std::snprintf(buf, sizeof buf, "\\x%02x", c);
                out += buf;
            } else {
                out.push_back(static_cast<char>(c));
            }
            ++i;
            continue;
        }
        unsigned cp = 0;
        std::size_t n = utf8_at(text, i, cp);
        if (n == 0) {
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
            ++i;
        } else if (cp <= 0x9F) {
            std::snprintf(buf, sizeof buf, "\\u%04x", cp);
            out += buf;
            i += n;
        } else {
            out.append(text.substr(i, n));
            i += n;
        }
    }
    return out;
}

} // namespace cvm
