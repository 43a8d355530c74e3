// The retries of failed download attempts (download_policy.h) and the download cache
// (download_cache.h), without a server.
#include "install/download_cache.h"
#include "install/download_policy.h"

#include "test_util.h"

#include <catch2/catch.hpp>

using namespace cvm::install;
using namespace cvm::install::test;

TEST_CASE("download retries: transient failures while retries remain, unreached hosts twice",
          "[download_policy]") {
    DownloadOptions o;
    o.retries = 4;
    CHECK(retry_failed_attempt(true, false, 0, 0, o));
    CHECK(retry_failed_attempt(true, false, 3, 0, o));
    CHECK_FALSE(retry_failed_attempt(true, false, 4, 0, o));
    CHECK_FALSE(retry_failed_attempt(false, false, 0, 0, o));
    // A host not reached: tried once more only, whatever the retries left.
    CHECK(retry_failed_attempt(true, true, 0, 1, o));
    CHECK_FALSE(retry_failed_attempt(true, true, 1, 2, o));
    o.retries = 0;
    CHECK_FALSE(retry_failed_attempt(true, false, 0, 0, o));
}

TEST_CASE("download retries: the wait doubles, up to 30 s", "[download_policy]") {
    DownloadOptions o;
    o.retry_delay_ms = 1000;
    CHECK(retry_delay_ms(o, 1) == 1000);
    CHECK(retry_delay_ms(o, 2) == 2000);
    CHECK(retry_delay_ms(o, 3) == 4000);
    CHECK(retry_delay_ms(o, 5) == 16000);
    CHECK(retry_delay_ms(o, 6) == 30000);
    CHECK(retry_delay_ms(o, 9) == 30000);
    o.retry_delay_ms = 10;
    CHECK(retry_delay_ms(o, 6) == 320); // doubled five times at most
    CHECK(retry_delay_ms(o, 12) == 320);
}

TEST_CASE("download cache: a file already there is reused only when it is the one asked for",
          "[download_cache]") {
    TempDir tmp;
    DownloadRequest r;
    r.destination = tmp / "a.tar.xz";
    CHECK_FALSE(reuse_cached_download(r)); // nothing there

    write_file(r.destination, "abc");
    const std::string abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    r.sha256 = abc;
    auto sum = reuse_cached_download(r);
    REQUIRE(sum);
    CHECK(*sum == abc);

    r.sha256 = std::string(64, '0'); // another file: removed
    CHECK_FALSE(reuse_cached_download(r));
    CHECK_FALSE(fs::exists(r.destination));

    write_file(r.destination, "abc");
    r.sha256.clear();
    r.expected_size = 3; // no checksum: its size
    sum = reuse_cached_download(r);
    REQUIRE(sum);
    CHECK(sum->empty());
    r.expected_size = 4;
    CHECK_FALSE(reuse_cached_download(r));
    CHECK_FALSE(fs::exists(r.destination));

    // A folder in the way is no cached file, and is left alone.
    fs::create_directories(r.destination);
    CHECK_FALSE(reuse_cached_download(r));
    CHECK(fs::is_directory(r.destination));
}

TEST_CASE("download cache: one lock per destination", "[download_cache]") {
    TempDir tmp;
    std::vector<DownloadRequest> requests(3);
    requests[0].destination = tmp / "b" / "x.tar.xz";
    requests[1].destination = tmp / "a" / "y.tar.xz";
    requests[2].destination = tmp / "b" / "x.tar.xz";
    auto locks = lock_download_destinations(requests);
    CHECK(locks.size() == 2);
    CHECK(fs::exists(tmp / "a" / "y.tar.xz.lock"));
    CHECK(fs::exists(tmp / "b" / "x.tar.xz.lock"));
    // Held: another taker is refused while they are.
    cvm::platform::FileLock other;
    CHECK_FALSE(other.acquire(tmp / "a" / "y.tar.xz.lock", true));
    locks.clear();
    CHECK(other.acquire(tmp / "a" / "y.tar.xz.lock", true));
}
