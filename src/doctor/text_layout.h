#pragma once
// The doctor's text for people: lines wrapped to the terminal (words never split, continuation
// lines under the text they continue) and paths shortened (the home folder as ~, a long path
// under a cvm store as …/STORE/KIND/ID/…/FILE, another long path as its first and last folders).
// Colour escapes count as no width.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cvm::doctor {

struct TextLayout {
    std::size_t width = 0;           // 0: no wrapping and no eliding (not a terminal)
    std::string home;                // shown as ~ (empty: none)
    std::vector<std::string> stores; // store layers' roots, for eliding inside them
};

// Columns a line takes on a terminal: UTF-8 characters, less colour escapes.
std::size_t visible_width(std::string_view text);

// `line` cut at spaces into lines of at most `width` columns (a longer word stays whole); the
// lines after the first start with `indent` spaces. Unchanged when width is 0.
std::string wrap_visible(const std::string& line, std::size_t width, std::size_t indent);

// Every absolute path in `text` (a word starting with '/', after an opening bracket or quote)
// with the home folder as ~ and, when layout.width is set, a path longer than `longest`
// columns elided in its middle.
std::string shorten_paths(const std::string& text, const TextLayout& layout, std::size_t longest);

} // namespace cvm::doctor
