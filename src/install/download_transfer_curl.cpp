// One transfer of the downloads through libcurl (download_transfer_curl.h): its libcurl handle,
// its body written and held to its size, what an earlier attempt left in its part file.
#include "install/download_transfer_curl.h"

#include "install/download_credentials.h"
#include "install/download_tap.h"
#include "install/progress.h"
#include "platform/platform.h"

#include <algorithm>
#include <fstream>
#include <vector>

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

// Stops the body for a size past its limit: sets abort_reason (and abort_mismatch past the
// request's own size).
bool stop_for_size(Transfer& t, const SizeOverrun& overrun) {
    t.abort_reason = overrun.reason;
    t.abort_mismatch = overrun.mismatch;
    return false;
}

// Whether the body may grow by `n` bytes: never past the size the manifest gives, the one the
// server announced, or (knowing neither) max_size. Sets abort_reason when not.
bool within_size(Transfer& t, std::size_t n, std::uint64_t max_size) {
    std::uint64_t expected = t.request ? t.request->expected_size : 0;
    if (!t.checked_length) {
        t.checked_length = true;
        curl_off_t length = -1;
        curl_easy_getinfo(t.easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
        if (length >= 0)
            if (auto overrun = announced_overrun(t.resumed + static_cast<std::uint64_t>(length),
                                                 expected, max_size))
                return stop_for_size(t, *overrun);
    }
    if (auto overrun = body_overrun(t.resumed + t.received + n, expected, max_size))
        return stop_for_size(t, *overrun);
    return true;
}

} // namespace

std::string download_label(const DownloadRequest& r) {
    if (!r.label.empty()) return r.label;
    return r.destination.filename().u8string();
}

size_t write_body(char* data, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    size_t n = size * count;
    // A redirect's own body is not the file: dropped (complete() follows the redirect).
    long status = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    if (status >= 300 && status < 400) return n;
    if (t->memory == nullptr && !within_size(*t, n, t->max_size)) return 0;
    if (t->memory != nullptr) {
        if (t->memory->size() + n > t->max_size) {
            t->write_error = "larger than " + Progress::format_bytes(t->max_size);
            return 0;
        }
        t->memory->append(data, n);
    } else {
        if (int err = t->out.write_all(data, n)) {
            t->write_error = platform::error_text(err);
            t->write_errno = err;
            return 0;
        }
        t->hash.update(data, n);
        t->hashed += n;
        // A reader takes the bytes from the file through its own handle.
        if (t->request->tap) t->request->tap->grew(t->resumed + t->received + n);
    }
    t->received += n;
    return n;
}

std::uint64_t resumable_bytes(Transfer& t) {
    std::error_code ec;
    std::uint64_t have = fs::exists(t.part, ec) ? fs::file_size(t.part, ec) : 0;
    if (ec) have = 0;
    if (t.request->expected_size && have > t.request->expected_size) {
        platform::remove_shared_file(t.part, ec);
        have = 0;
    }
    if (have == t.hashed) return have;
    // Feed what an earlier run left behind into the checksum.
    t.hash = Sha256();
    t.hashed = 0;
    if (have == 0) return 0;
    std::ifstream in(t.part, std::ios::binary);
    std::vector<char> buf(1 << 20);
    while (in && t.hashed < have) {
        in.read(buf.data(),
                static_cast<std::streamsize>(std::min<std::uint64_t>(buf.size(), have - t.hashed)));
        auto got = static_cast<std::size_t>(in.gcount());
        t.hash.update(buf.data(), got);
        t.hashed += got;
    }
    if (t.hashed == have) return have;
    t.hash = Sha256();
    t.hashed = 0;
    platform::remove_shared_file(t.part, ec);
    return 0;
}

std::uint64_t deadline_size(const Transfer& t, std::uint64_t max_size) {
    std::uint64_t size = t.request && t.request->expected_size ? t.request->expected_size
                         : t.memory                            ? t.max_size
                                                               : max_size;
    curl_off_t length = -1;
    curl_easy_getinfo(t.easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
    if (length >= 0 && (!t.request || t.request->expected_size == 0))
        size = t.resumed + static_cast<std::uint64_t>(length);
    return size;
}

CURL* start_easy(Transfer& t, const DownloadOptions& options) {
    CURL* e = curl_easy_init();
    t.easy = e;
    curl_easy_setopt(e, CURLOPT_URL, t.url.c_str());
    curl_easy_setopt(e, CURLOPT_PRIVATE, &t);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &write_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t.errbuf);
    curl_easy_setopt(e, CURLOPT_FAILONERROR, 1L);
    // Redirects are followed by complete(), each hop held to url_allowed (the rule for
    // CVM_MIRROR), and credentials go only to the origin they were given for.
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    if (auto cred = url_credentials_for(t.url)) {
        curl_easy_setopt(e, CURLOPT_USERNAME, cred->first.c_str());
        curl_easy_setopt(e, CURLOPT_PASSWORD, cred->second.c_str());
    }
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "cvm");
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 512L * 1024);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https,http,file");
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, options.connect_timeout_s);
    if (options.stall_timeout_s > 0) {
        curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, options.stall_timeout_s);
    }
    if (t.resumed > 0)
        curl_easy_setopt(e, CURLOPT_RESUME_FROM_LARGE, static_cast<curl_off_t>(t.resumed));
    return e;
}

} // namespace cvm::install
