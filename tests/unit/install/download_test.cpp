#include "archive_builder.h"
#include "http_server.h"
#include "install/download.h"
#include "install/error.h"
#include "install/sha256.h"
#include "platform/cleanup_on_signal.h"
#include "test_util.h"

#include <chrono>
#include <csignal>
#include <thread>

using namespace cvm::install;
using namespace cvm::install::test;
namespace fs = std::filesystem;

namespace {

struct Fixture {
    TempDir tmp;
    fs::path served = tmp / "served";
    fs::path cache = tmp / "cache";
    fs::path log = tmp / "requests.log";
    std::string content = pseudo_random_bytes(3 << 20, 9);
    std::string sha;
    Fixture() {
        fs::create_directories(served);
        fs::create_directories(cache);
        write_file(served / "a.tar.xz", content);
        sha = sha256_file(served / "a.tar.xz");
    }
    DownloadOptions options() const {
        DownloadOptions o;
        o.retry_delay_ms = 10;
        o.retries = 3;
        // Limits a busy machine cannot reach by chance (a server starved for 2 s was retried,
        // and counted); the tests of the limits set their own.
        o.stall_timeout_s = 60;
        o.connect_timeout_s = 60;
        return o;
    }
    DownloadRequest request(const HttpServer& server) const {
        DownloadRequest r;
        r.url = server.url("a.tar.xz");
        r.destination = cache / "a.tar.xz";
        r.sha256 = sha;
        r.expected_size = content.size();
        return r;
    }
    std::string requests() const { return fs::exists(log) ? read_file(log) : ""; }
    int count(const std::string& needle) const {
        std::string text = requests();
        int n = 0;
        for (std::size_t at = text.find(needle); at != std::string::npos;
             at = text.find(needle, at + 1))
            ++n;
        return n;
    }
};

} // namespace

TEST_CASE("sha256 of files matches sha256sum", "[sha256]") {
    TempDir tmp;
    write_file(tmp / "empty", "");
    CHECK(sha256_file(tmp / "empty") ==
          "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    write_file(tmp / "abc", "abc");
    CHECK(sha256_file(tmp / "abc") ==
          "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    write_file(tmp / "big", pseudo_random_bytes(5 << 20, 3));
    REQUIRE(shell("sha256sum " + shell_quote((tmp / "big").string()) + " | cut -c1-64 > " +
                  shell_quote((tmp / "sum").string())) == 0);
    CHECK(sha256_file(tmp / "big") + "\n" == read_file(tmp / "sum"));
    Sha256 h;
    h.update("a", 1);
    h.update("bc", 2);
    CHECK(h.hex_digest() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(sha256_equal("ABCdef", "abcDEF"));
    CHECK_THROWS_AS(sha256_file(tmp / "missing"), InstallError);
}

TEST_CASE("which URLs may be fetched", "[download]") {
    DownloadOptions o;
    std::string why;
    CHECK(url_allowed("https://developer.download.nvidia.com/compute/x", o, &why));
    CHECK(url_allowed("http://127.0.0.1:8000/x", o, &why));
    CHECK(url_allowed("http://localhost/x", o, &why));
    CHECK(url_allowed("http://[::1]:99/x", o, &why));
    CHECK(url_allowed("file:///tmp/x", o, &why));
    CHECK_FALSE(url_allowed("http://example.com/x", o, &why));
    CHECK(why.find("CVM_ALLOW_HTTP") != std::string::npos);
    CHECK_FALSE(url_allowed("ftp://example.com/x", o, &why));
    CHECK_FALSE(url_allowed("not a url", o, &why));
    o.allow_insecure_http = true;
    CHECK(url_allowed("http://example.com/x", o, &why));
    CHECK(file_url_path("file:///tmp/a%20b") == "/tmp/a b");
    CHECK(file_url_path("https://x/y").empty());
}

TEST_CASE("download succeeds and verifies; the cache is reused", "[download]") {
    Fixture f;
    HttpServer server(f.served, {}, f.log);
    auto r = f.request(server);
    download_all({r}, f.options());
    CHECK(read_file(r.destination) == f.content);
    CHECK_FALSE(fs::exists(fs::path(r.destination.string() + ".part")));
    int before = f.count("GET /a.tar.xz");
    CHECK(before == 1);
    download_all({r}, f.options());
    CHECK(f.count("GET /a.tar.xz") == before); // served from the cache
}

TEST_CASE("a wrong checksum deletes the file and fails", "[download]") {
    Fixture f;
    HttpServer server(f.served, {}, f.log);
    auto r = f.request(server);
    r.sha256 = std::string(64, '0');
    std::string m = install_error_of([&] { download_all({r}, f.options()); });
    CHECK(m.find("checksum mismatch") != std::string::npos);
    CHECK(m.find(r.url) != std::string::npos);
    CHECK_FALSE(fs::exists(r.destination));
    CHECK_FALSE(fs::exists(fs::path(r.destination.string() + ".part")));
}

namespace {

// The mismatch download_all reports, as data.
DownloadMismatch mismatch_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const DownloadMismatchError& e) {
        CHECK(e.code() == "checksum");
        CHECK(e.exit_code() == 1);
        return e.mismatch();
    }
    FAIL("no DownloadMismatchError");
    return {};
}

} // namespace

TEST_CASE("a file that is not the one asked for is reported as data: which check, expected, got",
          "[download]") {
    Fixture f;
    HttpServer server(f.served, {"/b.tar.xz=pad:5000"}, f.log);
    auto r = f.request(server);
    r.sha256 = std::string(64, 'a');
    DownloadMismatch m = mismatch_of([&] { download_all({r}, f.options()); });
    CHECK(m.check == DownloadMismatch::Check::Sha256);
    CHECK(m.expected_sha256 == r.sha256);
    CHECK(m.actual_sha256 == f.sha);
    CHECK(m.describe() == "checksum mismatch: expected sha256 " + r.sha256 + ", got " + f.sha);

    r = f.request(server);
    r.expected_size = f.content.size() + 1; // the server sends less
    m = mismatch_of([&] { download_all({r}, f.options()); });
    CHECK(m.check == DownloadMismatch::Check::Size);
    CHECK(m.expected_size == f.content.size() + 1);
    CHECK(m.actual_size == f.content.size());
    CHECK(m.describe() == "size mismatch: expected " + std::to_string(f.content.size() + 1) + " bytes, got " +
                              std::to_string(f.content.size()));

    write_file(f.served / "b.tar.xz", f.content);
    r = f.request(server);
    r.url = server.url("b.tar.xz");
    r.destination = f.cache / "b.tar.xz";
    m = mismatch_of([&] { download_all({r}, f.options()); });
    CHECK(m.check == DownloadMismatch::Check::AnnouncedSize);
    CHECK(m.expected_size == f.content.size());
    CHECK(m.actual_size == f.content.size() + 5000);
    CHECK(m.describe("the lock gives") == "the server announces " + bytes_text(f.content.size() + 5000) +
                                              ", more than the " + bytes_text(f.content.size()) + " the lock gives");
    CHECK_FALSE(fs::exists(r.destination));

    // Not a mismatch: a failure of the network.
    r = f.request(server);
    r.url = server.url("missing");
    std::string code;
    try {
        download_all({r}, f.options());
    } catch (const DownloadMismatchError&) {
        code = "mismatch";
    } catch (const InstallError& e) {
        code = e.code();
    }
    CHECK(code == "network");
}

TEST_CASE("404 fails at once, naming the URL", "[download]") {
    Fixture f;
    HttpServer server(f.served, {}, f.log);
    auto r = f.request(server);
    r.url = server.url("missing.tar.xz");
    std::string m = install_error_of([&] { download_all({r}, f.options()); });
    CHECK(m.find("HTTP 404") != std::string::npos);
    CHECK(m.find("missing.tar.xz") != std::string::npos);
    CHECK(f.count("GET /missing.tar.xz") == 1);
}

TEST_CASE("a server that dies mid-file is resumed with Range", "[download]") {
    Fixture f;
    HttpServer server(f.served, {"/a.tar.xz=die:1000000,times=2"}, f.log);
    auto r = f.request(server);
    download_all({r}, f.options());
    CHECK(read_file(r.destination) == f.content);
    CHECK(f.count("Range") == 0); // header name is not logged, values are
    CHECK(f.count("bytes=") >= 1);
}

TEST_CASE("a failed download leaves no partial file; one left by a killed run is resumed",
          "[download]") {
    Fixture f;
    auto r0 = [&](const HttpServer& s) { return f.request(s); };
    {
        HttpServer dying(f.served, {"/a.tar.xz=die:1500000"}, f.log);
        auto options = f.options();
        options.retries = 1;
        auto r = r0(dying);
        std::string m = install_error_of([&] { download_all({r}, options); });
        CHECK(m.find("a.tar.xz") != std::string::npos);
        CHECK(f.count("bytes=1500000-") == 1); // the retry in this run resumed it
        CHECK_FALSE(fs::exists(fs::path(r.destination.string() + ".part")));
        CHECK_FALSE(fs::exists(r.destination));
    }
    HttpServer healthy(f.served, {}, f.log);
    auto r = r0(healthy);
    // SIGKILL leaves the part file: the next run continues it.
    write_file(fs::path(r.destination.string() + ".part"), f.content.substr(0, 1200000));
    download_all({r}, f.options());
    CHECK(read_file(r.destination) == f.content);
    CHECK(f.count("bytes=1200000-") == 1);
}

TEST_CASE("a server that ignores Range gets the whole file again", "[download]") {
    Fixture f;
    HttpServer server(f.served, {"/a.tar.xz=norange"}, f.log);
    auto r = f.request(server);
    write_file(fs::path(r.destination.string() + ".part"), f.content.substr(0, 1000));
    download_all({r}, f.options());
    CHECK(read_file(r.destination) == f.content);
}

TEST_CASE("a stale partial file from another version is discarded", "[download]") {
    Fixture f;
    HttpServer server(f.served, {}, f.log);
    auto r = f.request(server);
    write_file(fs::path(r.destination.string() + ".part"), std::string(1000, 'x'));
    download_all({r}, f.options());
    CHECK(read_file(r.destination) == f.content);
}

TEST_CASE("a stalled server times out", "[download]") {
    Fixture f;
    // The stall outlasts the server (--timeout 120): only the stall timeout says "stalled".
    HttpServer server(f.served, {"/a.tar.xz=stall:100000:3600"}, f.log);
    auto r = f.request(server);
    auto options = f.options();
    options.retries = 0;
    options.stall_timeout_s = 1;
    std::string m = install_error_of([&] { download_all({r}, options); });
    CHECK(m.find("stalled") != std::string::npos);
}

TEST_CASE("transient 503s are retried", "[download]") {
    Fixture f;
    HttpServer server(f.served, {"/a.tar.xz=status:503,times=2"}, f.log);
    auto r = f.request(server);
    download_all({r}, f.options());
    CHECK(read_file(r.destination) == f.content);
    CHECK(f.count(" 503") == 2);
    HttpServer always(f.served, {"/b=status:503"}, f.log);
    r.url = always.url("b");
    r.destination = f.cache / "b";
    auto options = f.options();
    options.retries = 2;
    std::string m = install_error_of([&] { download_all({r}, options); });
    CHECK(m.find("HTTP 503") != std::string::npos);
    CHECK(m.find("3 attempts") != std::string::npos);
}

TEST_CASE("several downloads at once", "[download]") {
    Fixture f;
    std::vector<std::string> contents;
    for (int i = 0; i < 5; ++i) {
        contents.push_back(pseudo_random_bytes(700000 + i, 20 + i));
        write_file(f.served / ("f" + std::to_string(i)), contents.back());
    }
    HttpServer server(f.served, {"/f*=slow:1000000"}, f.log);
    std::vector<DownloadRequest> requests;
    for (int i = 0; i < 5; ++i) {
        DownloadRequest r;
        r.url = server.url("f" + std::to_string(i));
        r.destination = f.cache / ("f" + std::to_string(i));
        r.sha256 = sha256_file(f.served / ("f" + std::to_string(i)));
        requests.push_back(r);
    }
    auto options = f.options();
    options.parallel = 5;
    download_all(requests, options);
    for (int i = 0; i < 5; ++i)
        CHECK(read_file(requests[static_cast<std::size_t>(i)].destination) ==
              contents[static_cast<std::size_t>(i)]);
    // All five requests reached the server before the first body (0.7 s at that rate) ended:
    // they were in flight together. One after another, each GET would follow a DONE.
    std::string log = read_file(f.log);
    std::size_t first_done = log.find("DONE ");
    REQUIRE(first_done != std::string::npos);
    int started = 0;
    for (std::size_t at = log.find("GET /f"); at != std::string::npos && at < first_done;
         at = log.find("GET /f", at + 1))
        ++started;
    CHECK(started == 5);
}

TEST_CASE("file:// URLs and fetch_text", "[download]") {
    Fixture f;
    DownloadRequest r;
    r.url = "file://" + (f.served / "a.tar.xz").string();
    r.destination = f.cache / "copy";
    r.sha256 = f.sha;
    download_all({r}, f.options());
    CHECK(read_file(r.destination) == f.content);
    write_file(f.served / "m.json", "{\"x\":1}");
    HttpServer server(f.served, {}, f.log);
    CHECK(fetch_text(server.url("m.json"), f.options()) == "{\"x\":1}");
    CHECK(fetch_text("file://" + (f.served / "m.json").string(), f.options()) == "{\"x\":1}");
    std::string m = install_error_of([&] { fetch_text(server.url("nope.json"), f.options()); });
    CHECK(m.find("404") != std::string::npos);
    std::string big =
        install_error_of([&] { fetch_text(server.url("a.tar.xz"), f.options(), 1000); });
    CHECK(big.find("larger than") != std::string::npos);
}

namespace {

// What the server logged as sent for PATH ("SENT /x 123"), once the connection is over (a
// minute at most: a busy machine is slow, not broken).
std::uint64_t sent_bytes(const Fixture& f, const std::string& path) {
    for (int i = 0; i < 1200; ++i) {
        std::string text = f.requests();
        auto at = text.find("SENT " + path + " ");
        if (at != std::string::npos)
            return std::stoull(text.substr(at + 6 + path.size()));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL("the server logged no SENT line for " << path << ": " << f.requests());
    return 0;
}

bool part_left(const DownloadRequest& r) {
    return fs::exists(fs::path(r.destination.string() + ".part"));
}

} // namespace

TEST_CASE("an endless body stops right after the manifest's size", "[download]") {
    Fixture f;
    HttpServer server(f.served, {"/a.tar.xz=endless"}, f.log);
    auto r = f.request(server);
    std::string m = install_error_of([&] { download_all({r}, f.options()); });
    CHECK(m.find("more than the " + std::to_string(f.content.size()) + " bytes") !=
          std::string::npos);
    CHECK(m.find("manifest") != std::string::npos);
    CHECK_FALSE(part_left(r));
    CHECK_FALSE(fs::exists(r.destination));
    CHECK(f.count("GET /a.tar.xz") == 1); // not retried
    // What the server got rid of before cvm hung up: the size plus what the sockets buffer.
    CHECK(sent_bytes(f, "/a.tar.xz") < f.content.size() + (64u << 20));
    DownloadMismatch sent = mismatch_of([&] { download_all({r}, f.options()); });
    CHECK(sent.check == DownloadMismatch::Check::SentSize);
    CHECK(sent.expected_size == f.content.size());
    CHECK(sent.actual_size > f.content.size());
}

TEST_CASE("an endless body of unknown size stops at max_size", "[download]") {
    Fixture f;
    HttpServer server(f.served, {"/x=endless"}, f.log);
    auto r = f.request(server);
    r.url = server.url("x");
    r.expected_size = 0;
    auto options = f.options();
    options.max_size = 1 << 20;
    std::string m = install_error_of([&] { download_all({r}, options); });
    CHECK(m.find("more than 1048576 bytes") != std::string::npos);
    CHECK(m.find("CVM_DOWNLOAD_MAX_SIZE") != std::string::npos);
    CHECK_FALSE(part_left(r));
    CHECK(sent_bytes(f, "/x") < (1u << 20) + (64u << 20));
}

TEST_CASE("a Content-Length beyond the manifest's size is refused before the body", "[download]") {
    Fixture f;
    HttpServer server(f.served, {"/a.tar.xz=pad:5000"}, f.log);
    auto r = f.request(server);
    std::string m = install_error_of([&] { download_all({r}, f.options()); });
    CHECK(m.find("announces " + std::to_string(f.content.size() + 5000) + " bytes") !=
          std::string::npos);
    CHECK_FALSE(part_left(r));
    // Without a manifest size, the announced size is held against max_size.
    r.expected_size = 0;
    auto options = f.options();
    options.max_size = 1 << 20;
    m = install_error_of([&] { download_all({r}, options); });
    CHECK(m.find("announces " + std::to_string(f.content.size() + 5000) + " bytes") !=
          std::string::npos);
    CHECK(m.find("CVM_DOWNLOAD_MAX_SIZE") != std::string::npos);
    CHECK_FALSE(part_left(r));
}

TEST_CASE("a dripping server is stopped by the minimum rate", "[download]") {
    Fixture f;
    HttpServer server(f.served, {"/a.tar.xz=slow:4"}, f.log);
    auto r = f.request(server);
    auto options = f.options();
    options.stall_timeout_s = 0; // bytes do arrive: only the rate can stop it
    options.min_rate = 1000;
    options.rate_window_s = 1;
    options.retries = 1;
    std::string m = install_error_of([&] { download_all({r}, options); });
    CHECK(m.find("too slow") != std::string::npos);
    CHECK(m.find("CVM_DOWNLOAD_MIN_RATE") != std::string::npos);
    CHECK(m.find("2 attempts") != std::string::npos);
    CHECK(f.count("GET /a.tar.xz") == 2);
    CHECK_FALSE(part_left(r));
}

TEST_CASE("a download past its deadline is stopped", "[download]") {
    Fixture f;
    HttpServer server(f.served, {"/a.tar.xz=slow:200000"}, f.log);
    auto r = f.request(server);
    auto options = f.options();
    options.min_rate = 0;
    options.deadline_s = 1;
    options.deadline_rate = 1 << 30; // the 3 MiB add almost nothing
    std::string m = install_error_of([&] { download_all({r}, options); });
    CHECK(m.find("deadline") != std::string::npos);
    CHECK(m.find("CVM_DOWNLOAD_DEADLINE") != std::string::npos);
    CHECK(f.count("GET /a.tar.xz") == 1);
    CHECK_FALSE(part_left(r));
}

TEST_CASE("a refused connection is tried twice and says what to do offline", "[download]") {
    Fixture f;
    // Port 9 (discard): privileged, so no test's server takes it, as one could take the port of
    // a server just stopped.
    DownloadRequest r;
    r.url = "http://127.0.0.1:9/a.tar.xz";
    r.destination = f.cache / "a.tar.xz";
    auto options = f.options();
    options.retries = 4;
    std::string m = install_error_of([&] { download_all({r}, options); });
    CHECK(m.find("(after 2 attempts)") != std::string::npos);
    CHECK(m.find("cannot connect to 127.0.0.1:") != std::string::npos); // in cvm's words,
    CHECK(m.find("Couldn't") == std::string::npos);                     // not libcurl's
    CHECK(m.find("CVM_MIRROR") != std::string::npos);
    // What to fetch by other means is the installer's to say (offline_fix.h), from the URL the
    // error carries.
    CHECK(m.find("cvm install") == std::string::npos);
    bool unreachable = false;
    try {
        download_all({r}, options);
    } catch (const UnreachableError& e) {
        unreachable = true;
        CHECK(e.url() == r.url);
        CHECK(e.code() == "network");
    } catch (const std::exception&) {
    }
    CHECK(unreachable);
    CHECK_FALSE(part_left(r));
}

TEST_CASE("SIGTERM during a download removes the partial file", "[download]") {
    Fixture f;
    HttpServer server(f.served, {"/a.tar.xz=slow:100000"}, f.log);
    auto r = f.request(server);
    fs::path part = r.destination.string() + ".part";
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        std::signal(SIGTERM, SIG_DFL); // not Catch's handler: cvm runs with the default
        try {
            download_all({r}, f.options());
        } catch (...) {
        }
        ::_exit(3);
    }
    // (a minute at most for the first bytes: a busy machine is slow, not broken)
    for (int i = 0; i < 2400 && !(fs::exists(part) && fs::file_size(part) > 0); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    CHECK(fs::exists(part));
    ::kill(child, SIGTERM);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGTERM);
    CHECK_FALSE(fs::exists(part));
    CHECK_FALSE(fs::exists(r.destination));
}

TEST_CASE("SIGTERM while the server sends nothing stops the download at once", "[download]") {
    // The install unwinds: here the child writes `unwound`, removes its folder and releases its
    // guard, which ends it by the signal. A download that waited for bytes (none come: no stall,
    // rate or deadline limit) would be ended by the watcher after the grace period instead, with
    // nothing unwound.
    Fixture f;
    HttpServer server(f.served, {"/a.tar.xz=hold:65536:" + (f.tmp / "never").string()}, f.log);
    auto r = f.request(server);
    fs::path part = r.destination.string() + ".part";
    fs::path stage = f.tmp / "stage", unwound = f.tmp / "unwound";
    fs::create_directories(stage);
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        std::signal(SIGTERM, SIG_DFL); // not Catch's handler: cvm runs with the default
        cvm::platform::CleanupOnSignal guard(stage, cvm::platform::Removal::Tree);
        auto options = f.options();
        options.stall_timeout_s = 0;
        options.min_rate = 0;
        options.deadline_s = 0;
        try {
            download_all({r}, options);
        } catch (...) {
        }
        std::ofstream(unwound) << "unwound\n";
        std::error_code ec;
        fs::remove_all(stage, ec);
        guard.release(); // ends the process by the signal
        ::_exit(3);
    }
    // (a minute at most for the server to hold the body: a busy machine is slow, not broken)
    for (int i = 0; i < 2400 && f.requests().find("HELD /a.tar.xz") == std::string::npos; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    CHECK(f.requests().find("HELD /a.tar.xz") != std::string::npos);
    ::kill(child, SIGTERM);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGTERM);
    CHECK(fs::exists(unwound));
    CHECK_FALSE(fs::exists(stage));
    CHECK_FALSE(fs::exists(part));
}

TEST_CASE("cleanup on a signal keeps an earlier handler and an ignored signal", "[download]") {
    TempDir tmp;
    fs::path a = tmp / "a", b = tmp / "b";
    write_file(a, "x");
    write_file(b, "x");
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        static int pipe_out = fds[1];
        std::signal(SIGINT, [](int) {
            (void)!::write(pipe_out, "h", 1);
            ::_exit(7);
        });
        std::signal(SIGHUP, SIG_IGN);
        cvm::platform::CleanupOnSignal ga(a), gb(b);
        gb.release();
        ::raise(SIGHUP); // ignored before: still ignored, nothing removed
        (void)!::write(pipe_out, "s", 1);
        ::raise(SIGINT);
        ::_exit(0);
    }
    ::close(fds[1]);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    std::string said;
    char c;
    while (::read(fds[0], &c, 1) == 1)
        said += c;
    ::close(fds[0]);
    CHECK(said == "sh");
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 7);
    CHECK_FALSE(fs::exists(a));
    CHECK(fs::exists(b));
}
