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

namespace {

// The lines drawn right after the message "frame" (a forced redraw), up to the next clearing.
std::string frame_after(const std::string& text) {
    auto at = text.rfind("cvm: frame\n");
    if (at == std::string::npos) return {};
    at += 11;
    return text.substr(at, text.find('\x1b', at) - at);
}

std::string read_all(std::FILE* out) {
    std::rewind(out);
    std::string text;
    char buf[512];
    while (std::fgets(buf, sizeof buf, out))
        text += buf;
    std::fclose(out);
    return text;
}

} // namespace

TEST_CASE("a bar keeps its width when the speed appears", "[progress]") {
    auto inside = [](const std::string& line) { return line.substr(line.find('['), line.find(']') - line.find('[')); };
    for (std::uint64_t total : {100ull, 0ull}) {
        std::string before = Progress::bar_line("cudnn.tar.xz", 50, total, 0, 100);
        std::string after = Progress::bar_line("cudnn.tar.xz", 50, total, 123456, 100);
        CHECK(inside(before).size() == inside(after).size());
        CHECK(before.size() == after.size());
    }
}

TEST_CASE("one line per archive, its download before its extraction, a total of bytes fetched", "[progress]") {
    std::FILE* out = std::tmpfile();
    REQUIRE(out != nullptr);
    {
        Progress p(true, false, out);
        // A streamed install starts extracting an archive before its download begins.
        int xa = p.start("extracting", "a.tar.xz", 100);
        int da = p.start("downloading", "a.tar.xz", 100);
        p.update(da, 40);
        p.update(xa, 30);
        p.message("frame");
        int xb = p.start("extracting", "b.tar.xz", 100);
        int db = p.start("downloading", "b.tar.xz", 100);
        p.update(db, 10);
        p.update(xb, 5);
        p.message("frame");
        p.finish(da, true);
        p.finish(db, true);
        p.finish(xa, true);
        p.finish(xb, true);
    }
    std::string text = read_all(out);
    // The first frame: one archive, one line, the download's.
    auto first = text.substr(text.find("cvm: frame\n") + 11);
    first = first.substr(0, first.find('\x1b'));
    CHECK(first.find("downloading a.tar.xz") != std::string::npos);
    CHECK(first.find("extracting") == std::string::npos);
    CHECK(first.find("total") == std::string::npos);
    // The second: two downloads, then the total of their bytes (not the extractions' again).
    std::string second = frame_after(text);
    CHECK(second.find("downloading a.tar.xz") < second.find("downloading b.tar.xz"));
    CHECK(second.find("extracting") == std::string::npos);
    REQUIRE(second.find("total") != std::string::npos);
    CHECK(second.substr(second.find("total")).find("50 B/200 B") != std::string::npos);
}
