// Held downloads (legacy cuDNN archives, NVIDIA's installers): a file that is not the one its sum
// holds it to is refused with where the sum came from and, from the downloader's data, which
// check failed, what was expected and what came.
#include <catch2/catch.hpp>

#include "archive_builder.h"
#include "http_server.h"
#include "install/error.h"
#include "install/held_download.h"
#include "install/sha256.h"
#include "test_util.h"

using namespace cvm::install;
using namespace cvm::install::test;

namespace {

struct Held {
    TempDir tmp;
    fs::path mirror = tmp / "mirror";
    fs::path cache = tmp / "cache";
    std::string content = pseudo_random_bytes(200000, 5);
    std::string sha;
    HeldSum want;
    Held() {
        write_file(mirror / "x.tgz", content);
        sha = sha256_file(mirror / "x.tgz");
        want.sha256 = sha;
        want.size = content.size();
        want.from = "the SHA-256 in cvm's registry (from the test)";
        want.remedy = "Check CVM_MIRROR";
    }
    DownloadOptions options() const {
        DownloadOptions o;
        o.retry_delay_ms = 10;
        o.retries = 1;
        o.connect_timeout_s = 5;
        return o;
    }
    // "CODE: message" of the refusal; "" when the file is accepted.
    std::string refusal(const std::string& url) const {
        try {
            fetch_held("x.tgz", url, want, cache, options());
        } catch (const InstallError& e) {
            return e.code() + ": " + e.what();
        }
        return {};
    }
};

} // namespace

TEST_CASE("a held download that differs names its sum's source and the check that failed", "[download]") {
    Held h;
    HttpServer server(h.mirror, {}, h.tmp / "requests.log");
    const std::string url = server.url("x.tgz");
    const std::string zeros(64, '0');
    CHECK(h.refusal(url).empty());

    h.want.sha256 = zeros;
    CHECK(h.refusal(url) == "checksum: x.tgz from " + url +
                                " differs from the SHA-256 in cvm's registry (from the test) (checksum mismatch: "
                                "expected sha256 " + zeros + ", got " + h.sha +
                                "); deleted, nothing was installed. Check CVM_MIRROR");
    CHECK_FALSE(fs::exists(h.cache / "x.tgz"));

    h.want.sha256 = h.sha;
    h.want.size = h.content.size() - 1;
    CHECK(h.refusal(url) == "checksum: x.tgz from " + url + " differs from " + h.want.from +
                                " (the server announces " + bytes_text(200000) + ", more than the " +
                                bytes_text(199999) + " expected); deleted, nothing was installed. Check CVM_MIRROR");

    // Not a mismatch: said as the downloader says it.
    std::string missing = h.refusal(server.url("y.tgz"));
    CHECK(missing.rfind("network: download of " + server.url("y.tgz") + " failed: HTTP 404", 0) == 0);
}

TEST_CASE("a folder mirror's file is held to the same sum, in the same words", "[download]") {
    Held h;
    const std::string url = "file://" + (h.mirror / "x.tgz").string();
    CHECK(h.refusal(url).empty());
    h.want.size = h.content.size() + 1;
    CHECK(h.refusal(url) == "checksum: x.tgz at " + url +
                                " differs from the SHA-256 in cvm's registry (from the test) (size mismatch: "
                                "expected 200001 bytes, got 200000); nothing was installed. Check CVM_MIRROR");
    h.want.size = 0;
    h.want.sha256 = std::string(64, 'f');
    CHECK(h.refusal(url) == "checksum: x.tgz at " + url + " differs from " + h.want.from +
                                " (checksum mismatch: expected sha256 " + h.want.sha256 + ", got " + h.sha +
                                "); nothing was installed. Check CVM_MIRROR");
    CHECK(fs::exists(h.mirror / "x.tgz")); // the mirror's own file stays
}
