#include "text_layout.h"

namespace cvm::doctor {

namespace {

std::vector<std::string> components(const std::string& path) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= path.size()) {
        std::size_t end = path.find('/', start);
        if (end == std::string::npos) end = path.size();
        out.push_back(path.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

std::string joined(const std::vector<std::string>& parts, std::size_t from, std::size_t to) {
    std::string out;
    for (std::size_t i = from; i < to; ++i) out += (i == from ? "" : "/") + parts[i];
    return out;
}

bool under(const std::string& path, const std::string& root) {
    return !root.empty() && path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
           path[root.size()] == '/';
}

const char* const kEllipsis = "\xe2\x80\xa6"; // …

// One path, shortened.
std::string shorten_one(const std::string& path, const TextLayout& layout, std::size_t longest) {
    std::string shown = path;
    if (!layout.home.empty() && layout.home != "/" && (path == layout.home || under(path, layout.home)))
        shown = "~" + path.substr(layout.home.size());
    if (layout.width == 0 || visible_width(shown) <= longest) return shown;
    // Inside a store: …/STORE/KIND/ID[/…]/FILE names the entry and the file.
    for (const auto& store : layout.stores) {
        if (!under(path, store)) continue;
        auto rest = components(path.substr(store.size() + 1));
        const std::string name = components(store).back();
        if (rest.size() < 3) break;
        std::string out = std::string(kEllipsis) + "/" + name + "/" + rest[0] + "/" + rest[1] + "/";
        if (rest.size() > 3) out += std::string(kEllipsis) + "/";
        return out + rest.back();
    }
    // Elsewhere: the first two folders and the last two parts.
    auto parts = components(shown); // parts[0] is "" or "~"
    if (parts.size() <= 5) return shown;
    return joined(parts, 0, 3) + "/" + kEllipsis + "/" + joined(parts, parts.size() - 2, parts.size());
}

bool path_char(char c) {
    return c != ' ' && c != '\n' && c != ')' && c != ']' && c != ',' && c != ';' && c != ':' && c != '\'' && c != '"' &&
           c != '`' && c != '\x1b';
}

} // namespace

std::size_t visible_width(std::string_view text) {
    std::size_t w = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if (c == 0x1b && i + 1 < text.size() && text[i + 1] == '[') {
            i += 2;
            while (i < text.size() && !(text[i] >= 0x40 && text[i] <= 0x7e)) ++i;
            continue;
        }
        if ((c & 0xc0) != 0x80) ++w;
    }
    return w;
}

std::string wrap_visible(const std::string& line, std::size_t width, std::size_t indent) {
    if (width == 0 || visible_width(line) <= width) return line;
    if (indent + 20 > width) indent = 0;
    std::string out;
    std::size_t col = 0;        // columns on the output line so far
    bool fresh = true;          // the output line holds only its indent (or the line's own lead)
    std::string spaces;         // spaces seen before the next word
    std::size_t i = 0;
    // The line's own leading spaces stay.
    while (i < line.size() && line[i] == ' ') ++i;
    out.append(line, 0, i);
    col = i;
    while (i < line.size()) {
        if (line[i] == ' ') {
            spaces += ' ';
            ++i;
            continue;
        }
        std::size_t end = line.find(' ', i);
        if (end == std::string::npos) end = line.size();
        const std::string word = line.substr(i, end - i);
        const std::size_t w = visible_width(word);
        // A new line gains nothing for a word that would start at the indent column anyway.
        if (!fresh && col + spaces.size() + w > width && col + spaces.size() > indent) {
            out += "\n" + std::string(indent, ' ');
            col = indent;
        } else {
            out += spaces;
            col += spaces.size();
        }
        out += word;
        col += w;
        fresh = false;
        spaces.clear();
        i = end;
    }
    return out;
}

std::string shorten_paths(const std::string& text, const TextLayout& layout, std::size_t longest) {
    // Where a path may start: the line's start, after a space, an opening bracket or quote, '=',
    // ':' (a list), or right after a colour escape.
    auto opens = [&](std::size_t i) {
        if (i == 0) return true;
        const char c = text[i - 1];
        if (c == ' ' || c == '(' || c == '[' || c == '=' || c == '`' || c == '\'' || c == '"' || c == ':') return true;
        const std::size_t esc = text.rfind('\x1b', i - 1);
        return c == 'm' && esc != std::string::npos && text.find('m', esc) == i - 1;
    };
    std::string out;
    std::size_t i = 0;
    while (i < text.size()) {
        if (text[i] != '/' || !opens(i)) {
            out += text[i++];
            continue;
        }
        std::size_t end = i;
        while (end < text.size() && path_char(text[end])) ++end;
        // A trailing full stop or colon ends the sentence, not the path.
        while (end > i + 1 && (text[end - 1] == '.' || text[end - 1] == ':')) --end;
        out += shorten_one(text.substr(i, end - i), layout, longest);
        i = end;
    }
    return out;
}

} // namespace cvm::doctor
