// What every shell's code shares: checks, quoting, list helpers.
#include <algorithm>
#include <cstdio>

#include "shells/shell_common.h"

namespace cvm {

bool is_variable_name(std::string_view name) {
    if (name.empty()) return false;
    for (size_t i = 0; i < name.size(); ++i) {
        char c = name[i];
        bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
        bool digit = c >= '0' && c <= '9';
        if (!(alpha || (i > 0 && digit))) return false;
    }
    return true;
}

} // namespace cvm

namespace cvm::shell_detail {

using platform::Os;

void check_value(Shell shell, const std::string& name, std::string_view value) {
    if (value.find('\0') != std::string_view::npos)
        throw ShellError("the value of " + name + " contains a NUL character");
    if (shell == Shell::Cmd && value.find_first_of("\r\n") != std::string_view::npos)
        throw ShellError("the value of " + name +
                         " contains a line break, which cmd cannot set; rename the folder or use "
                         "another shell");
}

std::vector<std::string> names_of(const std::vector<EnvChange>& changes) {
    std::vector<std::string> names;
    for (const auto& c : changes) {
        if (!is_variable_name(c.name))
            throw ShellError("'" + printable(c.name) + "' is not a variable name a shell can set");
        if (std::find(names.begin(), names.end(), c.name) == names.end()) names.push_back(c.name);
    }
    return names;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += sep;
        out += items[i];
    }
    return out;
}

// Decodes one UTF-8 code point at `i`; returns false on malformed input.
bool next_code_point(std::string_view s, size_t& i, unsigned& cp) {
    auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned c = byte(i);
    size_t extra;
    if (c < 0x80) {
        cp = c;
        extra = 0;
    } else if ((c & 0xE0) == 0xC0) {
        cp = c & 0x1F;
        extra = 1;
    } else if ((c & 0xF0) == 0xE0) {
        cp = c & 0x0F;
        extra = 2;
    } else if ((c & 0xF8) == 0xF0) {
        cp = c & 0x07;
        extra = 3;
    } else {
        return false;
    }
    if (i + extra >= s.size()) return false;
    for (size_t k = 1; k <= extra; ++k) {
        unsigned b = byte(i + k);
        if ((b & 0xC0) != 0x80) return false;
        cp = (cp << 6) | (b & 0x3F);
    }
    static const unsigned min_for[] = {0, 0x80, 0x800, 0x10000};
    if (cp < min_for[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += extra + 1;
    return true;
}

// Length in UTF-16 code units (how cmd counts for %var:~n,m%).
size_t utf16_length(std::string_view s) {
    size_t n = 0;
    for (size_t i = 0; i < s.size();) {
        unsigned cp = 0;
        if (!next_code_point(s, i, cp)) {
            ++i; // counted as one replacement character
            ++n;
            continue;
        }
        n += cp >= 0x10000 ? 2 : 1;
    }
    return n;
}

std::string hex4(unsigned v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%04X", v);
    return buf;
}

std::string quote_posix(std::string_view v) {
    std::string out = "'";
    for (char c : v) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

std::string quote_fish(std::string_view v) {
    std::string out = "'";
    for (char c : v) {
        if (c == '\\' || c == '\'') out += '\\';
        out += c;
    }
    return out + "'";
}

std::string quote_pwsh(std::string_view v) {
    bool ascii = std::all_of(v.begin(), v.end(),
                             [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    if (ascii) {
        std::string out = "'";
        for (char c : v) {
            if (c == '\'') out += '\'';
            out += c;
        }
        return out + "'";
    }
    // Non-ASCII characters become [char] codes: PowerShell reads a native command's output and a
    // .ps1 without a BOM in the console's code page, which is rarely UTF-8 on Windows.
    std::string out = "('";
    for (size_t i = 0; i < v.size();) {
        unsigned char c = static_cast<unsigned char>(v[i]);
        if (c < 0x80) {
            if (c == '\'') out += '\'';
            out += static_cast<char>(c);
            ++i;
            continue;
        }
        unsigned cp = 0;
        if (!next_code_point(v, i, cp))
            throw ShellError("'" + printable(v) +
                             "' is not valid UTF-8; PowerShell cannot carry it");
        out += "'";
        if (cp >= 0x10000) {
            unsigned u = cp - 0x10000;
            out += "+[char]" + hex4(0xD800 + (u >> 10)) + "+[char]" + hex4(0xDC00 + (u & 0x3FF));
        } else {
            out += "+[char]" + hex4(cp);
        }
        out += "+'";
    }
    return out + "')";
}

std::string quote_cmd(std::string_view v) {
    std::string out;
    for (char c : v) {
        switch (c) {
        case '%':
            out += "%%";
            break;
        case '^':
        case '&':
        case '|':
        case '<':
        case '>':
        case '(':
        case ')':
        case '"':
            out += '^';
            out += c;
            break;
        default:
            out += c;
        }
    }
    return out;
}

// Trailing separators removed, as is_foreign_cuda_dir compares entries.
std::string normalized_dir(std::string s, Os os) {
    if (os == Os::Windows) {
        std::replace(s.begin(), s.end(), '/', '\\');
        while (s.size() > 3 && s.back() == '\\')
            s.pop_back();
    } else {
        while (s.size() > 1 && s.back() == '/')
            s.pop_back();
    }
    return s;
}

const EnvChange* find_change(const std::vector<EnvChange>& changes, const std::string& name) {
    for (const auto& c : changes)
        if (c.name == name) return &c;
    return nullptr;
}

std::string init_header(bool hook) {
    return std::string("# cvm: the shims first on PATH (once), the cvm function") +
           (hook ? " and the\n# prompt hook that applies the selection of the folder.\n" : ".\n");
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size())
        s.replace(pos, from.size(), to);
    return s;
}

const std::vector<std::string>& script_firsts(const ActivationScript& s, const std::string& name) {
    if (name == "PATH") return s.bin_dirs;
    if (name == "CPATH") return s.include_dirs;
    return s.lib_dirs;
}

std::vector<std::pair<std::string, int>> script_lists(const std::vector<EnvChange>& changes) {
    std::vector<std::pair<std::string, int>> out;
    for (const auto& v : list_variables(platform::Os::Linux))
        if (find_change(changes, v.name))
            out.emplace_back(v.name, v.kind == DirKind::Programs    ? 0
                                     : v.kind == DirKind::Libraries ? 1
                                                                    : 2);
    return out;
}

} // namespace cvm::shell_detail
