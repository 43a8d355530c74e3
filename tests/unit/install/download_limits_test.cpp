// The limits a transfer is held to (download_limits.h), without a server: its size, its
// deadline, its rate over the rate window.
#include "install/download_limits.h"

#include <catch2/catch.hpp>

using namespace cvm::install;

TEST_CASE("download limits: a body past the manifest's size is not the file", "[download_limits]") {
    CHECK_FALSE(announced_overrun(1000, 1000, 10));
    auto announced = announced_overrun(1001, 1000, 1 << 20);
    REQUIRE(announced);
    REQUIRE(announced->mismatch);
    CHECK(announced->mismatch->check == DownloadMismatch::Check::AnnouncedSize);
    CHECK(announced->mismatch->expected_size == 1000);
    CHECK(announced->mismatch->actual_size == 1001);
    CHECK(announced->reason ==
          "the server announces 1001 bytes, more than the 1000 bytes the manifest gives");

    CHECK_FALSE(body_overrun(1000, 1000, 10));
    auto sent = body_overrun(1001, 1000, 1 << 20);
    REQUIRE(sent);
    REQUIRE(sent->mismatch);
    CHECK(sent->mismatch->check == DownloadMismatch::Check::SentSize);
    CHECK(sent->reason ==
          "the server sent more than the 1000 bytes the manifest gives; stopped at once");
}

TEST_CASE("download limits: without a size, max_size bounds the body", "[download_limits]") {
    CHECK_FALSE(announced_overrun(5000, 0, 5000));
    auto announced = announced_overrun(5001, 0, 5000);
    REQUIRE(announced);
    CHECK_FALSE(announced->mismatch); // nothing was expected: no mismatch
    CHECK(announced->reason == "the server announces 5001 bytes, more than 5000 bytes "
                               "(CVM_DOWNLOAD_MAX_SIZE, download.max_size)");
    CHECK_FALSE(body_overrun(5000, 0, 5000));
    auto sent = body_overrun(5001, 0, 5000);
    REQUIRE(sent);
    CHECK_FALSE(sent->mismatch);
    CHECK(sent->reason == "the server sent more than 5000 bytes without saying how much "
                          "(CVM_DOWNLOAD_MAX_SIZE, download.max_size)");
}

TEST_CASE("download limits: the deadline grows with the size", "[download_limits]") {
    DownloadOptions o;
    o.deadline_s = 600;
    o.deadline_rate = 1000;
    CHECK(deadline_seconds(o, 0) == Approx(600));
    CHECK(deadline_seconds(o, 50000) == Approx(650));
    o.deadline_rate = 0; // the size adds nothing
    CHECK(deadline_seconds(o, 50000) == Approx(600));
    o.deadline_rate = 1000;
    std::string text = past_deadline_text(o, 50000, 651);
    CHECK(text.rfind("not finished after ", 0) == 0);
    CHECK(text.find(", its deadline (600 s plus " + bytes_text(50000) +
                    " at 1000 bytes/s; CVM_DOWNLOAD_DEADLINE, CVM_DOWNLOAD_DEADLINE_RATE)") !=
          std::string::npos);
}

TEST_CASE("download limits: too slow over a whole rate window", "[download_limits]") {
    using Clock = RateWindow::Clock;
    using std::chrono::seconds;
    DownloadOptions o;
    o.min_rate = 1000;
    o.rate_window_s = 10;
    const Clock::time_point start{};
    RateWindow w;
    w.restart(start);
    // Slow, but not for a whole window yet.
    CHECK_FALSE(w.too_slow(start + seconds(5), 100, o));
    CHECK_FALSE(w.too_slow(start + seconds(9), 200, o));
    auto slow = w.too_slow(start + seconds(10), 300, o);
    REQUIRE(slow);
    CHECK(*slow == "too slow: 30 bytes/s over the last 10 s, below the minimum 1000 bytes/s "
                   "(CVM_DOWNLOAD_MIN_RATE, CVM_DOWNLOAD_RATE_WINDOW)");

    // Fast enough over the window: a slow start is forgotten as the window moves on.
    RateWindow fast;
    fast.restart(start);
    CHECK_FALSE(fast.too_slow(start + seconds(10), 20000, o));
    CHECK_FALSE(fast.too_slow(start + seconds(20), 40000, o));
    // The rate is measured over the last window only: 2000 bytes in the 10 s since 20 s is too
    // slow.
    auto late = fast.too_slow(start + seconds(30), 42000, o);
    REQUIRE(late);
    CHECK(late->rfind("too slow: 200", 0) == 0);

    // Off when min_rate or the window is 0.
    RateWindow off;
    off.restart(start);
    o.min_rate = 0;
    CHECK_FALSE(off.too_slow(start + seconds(100), 0, o));
    o.min_rate = 1000;
    o.rate_window_s = 0;
    CHECK_FALSE(off.too_slow(start + seconds(100), 0, o));
}
