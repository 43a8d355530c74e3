#include "install/progress.h"
#include "test_util.h"

#include <cstdio>

using cvm::install::Progress;

TEST_CASE("sizes, durations and bar lines", "[progress]") {
    CHECK(Progress::format_bytes(512) == "512 B");
    CHECK(Progress::format_bytes(1500) == "1.5 kB");
    CHECK(Progress::format_bytes(860967256) == "861.0 MB");
    CHECK(Progress::format_bytes(2100000000ULL) == "2.10 GB");
    CHECK(Progress::format_duration(45) == "45s");
    CHECK(Progress::format_duration(62) == "1m02s");
    CHECK(Progress::format_duration(3780) == "1h03m");
    CHECK(Progress::format_duration(-1) == "--");
    std::string line = Progress::bar_line("cudnn.tar.xz", 50, 100, 10, 100);
    CHECK(line.find(" 50% ") != std::string::npos);
    CHECK(line.find("ETA 5s") != std::string::npos);
    CHECK(line.find("10 B/s") != std::string::npos);
    CHECK(line.find("#") != std::string::npos);
    CHECK(line.size() <= 100);
    std::string unknown = Progress::bar_line("x", 5000, 0, 0, 80);
    CHECK(unknown.find("5.0 kB") != std::string::npos);
    CHECK(unknown.find('%') == std::string::npos);
}

TEST_CASE("quiet lines when not on a terminal", "[progress]") {
    std::FILE* out = std::tmpfile();
    REQUIRE(out != nullptr);
    {
        Progress p(false, false, out);
        int a = p.start("downloading", "a.tar.xz", 2000000);
        p.update(a, 1000000);
        p.update(a, 2000000);
        p.finish(a, true);
        int b = p.start("extracting", "b.zip", 0);
        p.finish(b, false, "damaged");
        p.message("hello");
    }
    std::rewind(out);
    std::string text;
    char buf[256];
    while (std::fgets(buf, sizeof buf, out))
        text += buf;
    std::fclose(out);
    CHECK(text.find("cvm: downloading a.tar.xz (2.0 MB)\n") != std::string::npos);
    CHECK(text.find("cvm: downloading a.tar.xz done (2.0 MB in") != std::string::npos);
    CHECK(text.find("cvm: extracting b.zip failed: damaged\n") != std::string::npos);
    CHECK(text.find("cvm: hello\n") != std::string::npos);
    CHECK(text.find('\x1b') == std::string::npos); // no terminal control codes
}

TEST_CASE("bars on a terminal redraw in place", "[progress]") {
    std::FILE* out = std::tmpfile();
    REQUIRE(out != nullptr);
    {
        Progress p(true, false, out);
        int a = p.start("downloading", "a", 100);
        int b = p.start("downloading", "b", 100);
        p.update(a, 50);
        p.update(b, 20);
        p.finish(a, true);
        p.finish(b, true);
    }
    std::rewind(out);
    std::string text;
    char buf[512];
    while (std::fgets(buf, sizeof buf, out))
        text += buf;
    std::fclose(out);
    CHECK(text.find("\x1b[1A\x1b[2K") != std::string::npos); // lines are cleared and redrawn
    CHECK(text.find("total") != std::string::npos);          // an overall line for several
    CHECK(text.find("downloading a done") != std::string::npos);
}
