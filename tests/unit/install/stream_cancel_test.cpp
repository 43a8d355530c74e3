// download_and_extract with several archives: one that is refused stops the downloads of the
// others at once (the server holds the other body for good, and nothing limits how long a
// download may wait: only a cancelled one ends), and its refusal is the error; a download that
// fails is still reported as the download's failure.
#include "archive_builder.h"
#include "http_server.h"
#include "install/error.h"
#include "install/sha256.h"
#include "install/stream_extract.h"
#include "test_util.h"

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
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
        // 2 MB of noise, held by the server after its first 64 kB.
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
};

// Opens a gate file (an http_server.py "hold" rule waits for it) once the server's log shows
// `text`; a thread of its own, while the test waits for download_and_extract.
class GateOpener {
public:
    GateOpener(fs::path log, std::string text, fs::path gate)
        : thread_([this, log, text, gate] {
              while (!stop_.load()) {
                  std::ifstream in(log, std::ios::binary);
                  std::string seen((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
                  if (seen.find(text) != std::string::npos) {
                      std::ofstream(gate).put('\n');
                      return;
                  }
                  std::this_thread::sleep_for(std::chrono::milliseconds(20));
              }
          }) {}
    ~GateOpener() {
        stop_.store(true);
        thread_.join();
    }
    GateOpener(const GateOpener&) = delete;
    GateOpener& operator=(const GateOpener&) = delete;

private:
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

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
    // slow.tar is held after 64 kB for good; bad.tar.xz only once slow.tar is held, so the
    // refusal always comes while slow.tar downloads.
    fs::path slow_held = s.t / "slow-held";
    HttpServer server(s.served,
                      {"/slow.tar=hold:65536:" + (s.t / "never").string(),
                       "/bad.tar.xz=hold:0:" + slow_held.string()},
                      s.log);
    GateOpener opener(s.log, "HELD /slow.tar", slow_held);
    // A download_and_extract that waited for slow.tar would wait for good: no limit ends it.
    DownloadOptions options = quick();
    options.stall_timeout_s = 0;
    options.min_rate = 0;
    options.deadline_s = 0;
    SECTION("a downloaded archive") {
        std::vector<StreamJob> jobs = {s.job(server, "bad.tar.xz", "bad"),
                                       s.job(server, "slow.tar", "slow")};
        std::string error = install_error_of([&] { download_and_extract(jobs, options, 2); });
        CHECK_THAT(error, Catch::Contains("bad.tar.xz refused"));
        CHECK(read_file(s.log).find("HELD /slow.tar") != std::string::npos);
    }
    SECTION("an archive already on disk") {
        StreamJob local;
        local.local = s.served / "bad.tar.xz";
        local.destination = s.t / "x/bad";
        std::vector<StreamJob> jobs = {local, s.job(server, "slow.tar", "slow")};
        std::string error = install_error_of([&] { download_and_extract(jobs, options, 2); });
        CHECK_THAT(error, Catch::Contains("bad.tar.xz refused"));
    }
    CHECK_FALSE(fs::exists(s.cache / "slow.tar.part"));
    CHECK_FALSE(fs::exists(s.cache / "slow.tar"));
}

TEST_CASE("a download that fails is reported as such, not as its extraction") {
    Setup s;
    HttpServer server(s.served, {"/slow.tar=die:300000"}, s.log);
    std::vector<StreamJob> jobs = {s.job(server, "slow.tar", "slow")};
    std::string error = install_error_of([&] { download_and_extract(jobs, quick(), 1); });
    CHECK_THAT(error, Catch::Contains("download of " + server.url("slow.tar") + " failed"));
}
