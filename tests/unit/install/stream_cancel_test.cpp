// download_and_extract with several archives: one that is refused stops the downloads of the
// others at once (the server's log never shows the slow body's end), and its refusal is the
// error; a download that fails is still reported as the download's failure.
#include "archive_builder.h"
#include "http_server.h"
#include "install/error.h"
#include "install/sha256.h"
#include "install/stream_extract.h"
#include "test_util.h"

#include <chrono>
#include <thread>

using namespace cvm::install;
using namespace cvm::install::test;
namespace fs = std::filesystem;

namespace {

struct Setup {
    TempDir t;
    fs::path served = t / "served";
    fs::path cache = t / "cache";
    fs::path log = t / "requests.log";
    Setup() {
        fs::create_directories(served);
        fs::create_directories(cache);
        fs::create_directories(t / "x/bad");
        fs::create_directories(t / "x/slow");
        ArchiveBuilder evil;
        evil.file("ok/file", "fine").file("ok/../../evil", "x");
        evil.write(served / "bad.tar.xz", ArchiveBuilder::Format::TarXz);
        // 2 MB of noise at 100 kB/s: about 20 s to arrive whole.
        ArchiveBuilder slow;
        slow.file("top/big.bin", pseudo_random_bytes(2 << 20, 5));
        slow.write(served / "slow.tar", ArchiveBuilder::Format::Tar);
    }
    StreamJob job(const HttpServer& server, const std::string& name, const std::string& folder) {
        StreamJob j;
        j.request.url = server.url(name);
        j.request.destination = cache / name;
        j.request.sha256 = sha256_file(served / name);
        j.request.expected_size = fs::file_size(served / name);
        j.destination = t / "x" / folder;
        return j;
    }
    // Whether the server logged the end of `path`'s throttled body, once it saw the connection
    // closed (its next write, a tenth of a second later at most).
    bool completed(const std::string& path) {
        for (int i = 0; i < 100; ++i) {
            std::string text = fs::exists(log) ? read_text(log) : "";
            if (text.find("DONE /" + path) != std::string::npos) return true;
            if (text.find("SENT /" + path) != std::string::npos) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return true;
    }
};

std::string failure(const std::function<void()>& f) {
    try {
        f();
    } catch (const InstallError& e) {
        return e.what();
    }
    return "(no error)";
}

DownloadOptions quick() {
    DownloadOptions o;
    o.retry_delay_ms = 10;
    o.retries = 1;
    o.parallel = 2;
    return o;
}

} // namespace

TEST_CASE("a refused archive stops the other downloads of the install") {
    Setup s;
    HttpServer server(s.served, {"/slow.tar=slow:100000"}, s.log);
    SECTION("a downloaded archive") {
        std::vector<StreamJob> jobs = {s.job(server, "bad.tar.xz", "bad"),
                                       s.job(server, "slow.tar", "slow")};
        std::string error = failure([&] { download_and_extract(jobs, quick(), 2); });
        CHECK_THAT(error, Catch::Contains("bad.tar.xz refused"));
    }
    SECTION("an archive already on disk") {
        StreamJob local;
        local.local = s.served / "bad.tar.xz";
        local.destination = s.t / "x/bad";
        std::vector<StreamJob> jobs = {local, s.job(server, "slow.tar", "slow")};
        std::string error = failure([&] { download_and_extract(jobs, quick(), 2); });
        CHECK_THAT(error, Catch::Contains("bad.tar.xz refused"));
    }
    CHECK(read_text(s.log).find("GET /slow.tar") != std::string::npos);
    CHECK_FALSE(s.completed("slow.tar"));
    CHECK_FALSE(fs::exists(s.cache / "slow.tar.part"));
    CHECK_FALSE(fs::exists(s.cache / "slow.tar"));
}

TEST_CASE("a download that fails is reported as such, not as its extraction") {
    Setup s;
    HttpServer server(s.served, {"/slow.tar=die:300000"}, s.log);
    std::vector<StreamJob> jobs = {s.job(server, "slow.tar", "slow")};
    std::string error = failure([&] { download_and_extract(jobs, quick(), 1); });
    CHECK_THAT(error, Catch::Contains("download of " + server.url("slow.tar") + " failed"));
}
