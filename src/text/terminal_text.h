#pragma once
// Text for a terminal: a folder named "\e]0;pwned\a" or "\e[2J" in a path cvm prints would
// retitle or clear the terminal. Control characters (C0, DEL, and the C1 controls U+0080 to
// U+009F that some terminals act on) and bytes that are not UTF-8 are shown escaped, as
// `\x1b`, `\u009b`, `\xff`; --json escapes them anyway.
#include <string>
#include <string_view>

namespace cvm {

// `text` with its control characters escaped; line breaks are kept when `keep_newlines` (a
// report of several lines), else escaped too (a message is one line). With `keep_colors`, colour
// sequences (ESC [ digits and ';' m: what `cvm doctor` colours a terminal with) are kept, nothing
// else: a folder's name can at most colour the text, never move the cursor, clear the screen or
// set the title.
std::string escape_controls(std::string_view text, bool keep_newlines = false,
                            bool keep_colors = false);

} // namespace cvm
