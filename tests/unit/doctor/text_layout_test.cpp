// The doctor's text layout: wrapping to the terminal, colour escapes of no width, paths
// shortened (home as ~, long store paths elided to their entry and file).
#include <catch2/catch.hpp>

#include "doctor/text_layout.h"

using namespace cvm::doctor;

TEST_CASE("doctor text: wrapped to the width, continuation lines indented") {
    const std::string line = "  error    cuDNN 8.1.0 does not support sm_90 (NVIDIA H200, compute capability 9.0): its "
                             "build supports compute capability 3.5 to 8.6 [cudnn-arch-unsupported]";
    std::string out = wrap_visible(line, 60, 11);
    std::size_t start = 0;
    int lines = 0;
    while (start < out.size()) {
        std::size_t end = out.find('\n', start);
        if (end == std::string::npos) end = out.size();
        std::string one = out.substr(start, end - start);
        CHECK(visible_width(one) <= 60);
        if (lines > 0) CHECK(one.rfind(std::string(11, ' '), 0) == 0);
        ++lines;
        start = end + 1;
    }
    CHECK(lines >= 3);
    // Nothing lost: the words in order.
    std::string rejoined;
    for (char c : out) rejoined += c == '\n' ? ' ' : c;
    auto squash = [](std::string s) {
        std::string r;
        for (char c : s)
            if (c != ' ') r += c;
        return r;
    };
    CHECK(squash(rejoined) == squash(line));
    CHECK(wrap_visible(line, 0, 11) == line);
    // A word longer than the room stays whole.
    CHECK(wrap_visible("fix: /a/very/long/path/that/does/not/fit/anywhere/at/all/libcudnn.so.9", 40, 5)
              .find("/a/very/long/path/that/does/not/fit/anywhere/at/all/libcudnn.so.9") != std::string::npos);
    // Colour escapes take no room.
    CHECK(visible_width("\x1b[1;31merror\x1b[0m") == 5);
    CHECK(visible_width("\xe2\x80\xa6/x") == 3);
    CHECK(wrap_visible("\x1b[1;31merror   \x1b[0m short", 20, 2) == "\x1b[1;31merror   \x1b[0m short");
}

TEST_CASE("doctor text: paths shortened") {
    TextLayout layout;
    layout.home = "/home/ana";
    layout.stores = {"/home/ana/.local/share/cvm"};
    // Home as ~ always, but only a whole folder name.
    CHECK(shorten_paths("loads /home/ana/lib/libcudnn.so.8 (8.1.0)", layout, 40) == "loads ~/lib/libcudnn.so.8 (8.1.0)");
    CHECK(shorten_paths("at /home/anabel/lib/x.so", layout, 40) == "at /home/anabel/lib/x.so");
    CHECK(shorten_paths("(/home/ana)", layout, 40) == "(~)");
    // No eliding without a terminal width.
    const std::string store_file = "/home/ana/.local/share/cvm/views/11.2.2+8.1.0.77-cuda11.2/targets/x86_64-linux/lib/libcudnn.so.8";
    CHECK(shorten_paths(store_file, layout, 40) == "~/.local/share/cvm/views/11.2.2+8.1.0.77-cuda11.2/targets/x86_64-linux/lib/libcudnn.so.8");
    layout.width = 80;
    CHECK(shorten_paths("loads " + store_file + ": fine", layout, 40) ==
          "loads \xe2\x80\xa6/cvm/views/11.2.2+8.1.0.77-cuda11.2/\xe2\x80\xa6/libcudnn.so.8: fine");
    CHECK(shorten_paths("/opt/vendor/stack/2024/cuda/targets/x86_64-linux/lib/libcudart.so.12", layout, 40) ==
          "/opt/vendor/\xe2\x80\xa6/lib/libcudart.so.12");
    // Short paths and system folders stay as they are.
    CHECK(shorten_paths("from /usr/lib/x86_64-linux-gnu/libcudnn.so.9", layout, 40) ==
          "from /usr/lib/x86_64-linux-gnu/libcudnn.so.9");
    // A list keeps its separators; a colour escape before a path is no part of it.
    CHECK(shorten_paths("LD_LIBRARY_PATH=/home/ana/a:/home/ana/b", layout, 40) == "LD_LIBRARY_PATH=~/a:~/b");
    CHECK(shorten_paths("\x1b[2m/home/ana/x\x1b[0m", layout, 40) == "\x1b[2m~/x\x1b[0m");
}
