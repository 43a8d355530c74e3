#include "install/download.h"

#include "config/url_credentials.h"

#include "install/download_tap.h"
#include "install/error.h"
#include "install/progress.h"
#include "install/sha256.h"
#include "platform/cleanup_on_signal.h"
#include "platform/platform.h"
#include "platform/shared_file.h"

#include <curl/curl.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

void global_init() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct UrlParts {
    std::string scheme, host, path, port; // port: as given, else the scheme's
};

std::optional<UrlParts> parse_url(const std::string& url) {
    CURLU* u = curl_url();
    std::optional<UrlParts> out;
    if (curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK) {
        UrlParts parts;
        char* s = nullptr;
        if (curl_url_get(u, CURLUPART_SCHEME, &s, 0) == CURLUE_OK) {
            parts.scheme = s;
            curl_free(s);
        }
        if (curl_url_get(u, CURLUPART_HOST, &s, 0) == CURLUE_OK) {
            parts.host = s;
            curl_free(s);
        }
        if (curl_url_get(u, CURLUPART_PORT, &s, CURLU_DEFAULT_PORT) == CURLUE_OK) {
            parts.port = s;
            curl_free(s);
        }
        if (curl_url_get(u, CURLUPART_PATH, &s, CURLU_URLDECODE) == CURLUE_OK) {
            parts.path = s;
            curl_free(s);
        }
        out = parts;
    }
    curl_url_cleanup(u);
    return out;
}

// The credentials register_url_credentials took out of URLs, by origin ("https://host:443").
struct CredentialTable {
    std::mutex mutex;
    std::map<std::string, std::pair<std::string, std::string>> by_origin;
};
CredentialTable& credential_table() {
    static CredentialTable table;
    return table;
}

std::optional<std::pair<std::string, std::string>> credentials_for(const std::string& url) {
    CredentialTable& table = credential_table();
    std::lock_guard<std::mutex> lock(table.mutex);
    auto it = table.by_origin.find(url_origin(url));
    if (it == table.by_origin.end()) return std::nullopt;
    return it->second;
}

// libcurl's result in cvm's words (its own text names its internals: "Too large response
// headers", "Protocol \"file\" not supported").
std::string transfer_problem(CURLcode code) {
    switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
        return "timed out";
    case CURLE_SSL_CONNECT_ERROR:
        return "the TLS connection could not be set up";
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
        return "the server's certificate was not accepted";
    case CURLE_RECV_ERROR:
        return "the connection failed while receiving (or the server's answer was too large)";
    case CURLE_SEND_ERROR:
        return "the connection failed while sending";
    case CURLE_PARTIAL_FILE:
        return "the server closed the connection before the whole file arrived";
    case CURLE_GOT_NOTHING:
        return "the server closed the connection without an answer";
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return "the HTTP/2 connection failed";
    case CURLE_WEIRD_SERVER_REPLY:
        return "the server's answer is not HTTP";
    case CURLE_UNSUPPORTED_PROTOCOL:
        return "the URL's scheme is not one cvm downloads from (https://, file://)";
    case CURLE_URL_MALFORMAT:
        return "the URL is malformed";
    case CURLE_FILE_COULDNT_READ_FILE:
        return "the file cannot be read (missing, or no permission)";
    case CURLE_RANGE_ERROR:
        return "the server cannot resume the file";
    case CURLE_OUT_OF_MEMORY:
        return "out of memory (the server's answer may be too large)";
    case CURLE_ABORTED_BY_CALLBACK:
        return "stopped";
    default:
        return "the transfer failed (error " + std::to_string(static_cast<int>(code)) + ")";
    }
}

bool loopback(const std::string& host) {
    return host == "127.0.0.1" || host == "localhost" || host == "::1" || host == "[::1]";
}

// Errors worth another attempt: the network or the server hiccuped.
bool transient(CURLcode code, long http_status) {
    switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
        return true;
    case CURLE_HTTP_RETURNED_ERROR:
        return http_status >= 500 || http_status == 408 || http_status == 429;
    default:
        return false;
    }
}

// The host cannot be reached at all (offline, wrong name, nothing listening): retried once only,
// so that an install without network fails within seconds.
bool unreachable(CURLcode code) {
    return code == CURLE_COULDNT_RESOLVE_HOST || code == CURLE_COULDNT_RESOLVE_PROXY ||
           code == CURLE_COULDNT_CONNECT;
}

// Why a host cannot be reached, in cvm's words (libcurl's own text is about its internals:
// "Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server").
std::string unreachable_text(CURLcode code, const std::string& url) {
    auto parts = parse_url(url);
    std::string host = parts && !parts->host.empty() ? parts->host : url;
    if (code == CURLE_COULDNT_RESOLVE_HOST) return "the host " + host + " was not found (DNS lookup failed)";
    if (code == CURLE_COULDNT_RESOLVE_PROXY) return "the proxy's host was not found (DNS lookup failed; check https_proxy)";
    return "cannot connect to " + host + (parts && !parts->port.empty() ? ":" + parts->port : "") +
           " (connection refused, or no route to it)";
}

struct Transfer {
    const DownloadRequest* request = nullptr;
    std::string url;
    fs::path part;
    std::string* memory = nullptr; // fetch_text
    std::uint64_t max_size = 0;
    CURL* easy = nullptr;
    platform::SharedFile out; // the part file: a tap reads it, and it is renamed while read
    Sha256 hash;
    std::uint64_t hashed = 0;  // bytes of the part file fed to `hash`
    std::uint64_t resumed = 0; // bytes already there when this attempt started
    std::uint64_t received = 0;
    unsigned attempt = 0;
    unsigned unreachable = 0; // attempts that found no host
    unsigned redirects = 0;   // followed so far (each checked as CVM_MIRROR is)
    bool restarted_clean = false;
    bool kept = false;                   // renamed into place: not removed with the Downloader
    platform::CleanupOnSignal on_signal; // removes the part file if cvm is interrupted
    Clock::time_point not_before{};
    Clock::time_point first_start{}; // of the first attempt: the deadline counts from here
    std::deque<std::pair<Clock::time_point, std::uint64_t>> samples; // (when, received)
    std::string abort_reason; // set by on_write when the body outgrows its size
    std::optional<DownloadMismatch> abort_mismatch; // with abort_reason, past the request's size
    bool checked_length = false;
    int progress_id = -1;
    std::string write_error;
    int write_errno = 0; // the errno of a failed write to the part file, 0 otherwise
    char errbuf[CURL_ERROR_SIZE] = {};
    bool finished = false;
};

// The failure's name (error.h) for a write that failed with errno `err`.
const char* write_error_code(int err) {
    if (err == ENOSPC) return "no_space";
#ifdef EDQUOT
    if (err == EDQUOT) return "no_space";
#endif
    if (err == EACCES || err == EPERM || err == EROFS) return "permission";
    return "io";
}

std::string label_of(const DownloadRequest& r) {
    if (!r.label.empty()) return r.label;
    return r.destination.filename().u8string();
}

// Stops the body for a size past the request's: sets abort_mismatch and abort_reason.
bool past_expected_size(Transfer& t, DownloadMismatch::Check check, std::uint64_t size) {
    DownloadMismatch m;
    m.check = check;
    m.expected_size = t.request->expected_size;
    m.actual_size = size;
    t.abort_reason = m.describe("the manifest gives") +
                     (check == DownloadMismatch::Check::SentSize ? "; stopped at once" : "");
    t.abort_mismatch = m;
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
        if (expected > 0 && length >= 0 &&
            t.resumed + static_cast<std::uint64_t>(length) > expected)
            return past_expected_size(t, DownloadMismatch::Check::AnnouncedSize,
                                      t.resumed + static_cast<std::uint64_t>(length));
        if (expected == 0 && length >= 0 &&
            t.resumed + static_cast<std::uint64_t>(length) > max_size) {
            t.abort_reason = "the server announces " +
                             bytes_text(t.resumed + static_cast<std::uint64_t>(length)) +
                             ", more than " + bytes_text(max_size) +
                             " (CVM_DOWNLOAD_MAX_SIZE, download.max_size)";
            return false;
        }
    }
    std::uint64_t after = t.resumed + t.received + n;
    if (expected > 0 && after > expected)
        return past_expected_size(t, DownloadMismatch::Check::SentSize, after);
    if (expected == 0 && after > max_size) {
        t.abort_reason = "the server sent more than " + bytes_text(max_size) +
                         " without saying how much (CVM_DOWNLOAD_MAX_SIZE, download.max_size)";
        return false;
    }
    return true;
}

size_t on_write(char* data, size_t size, size_t count, void* user) {
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

class Downloader {
public:
    explicit Downloader(const DownloadOptions& options) : options_(options) {
        global_init();
        multi_ = curl_multi_init();
    }
    ~Downloader() {
        for (auto& t : transfers_) {
            drop(*t);
            if (t->request != nullptr && t->request->tap && !t->kept) t->request->tap->failed();
            // Whatever did not complete leaves nothing behind (a retry in this run resumed it).
            if (t->memory == nullptr && !t->kept) {
                std::error_code ec;
                platform::remove_shared_file(t->part, ec);
            }
        }
        curl_multi_cleanup(multi_);
    }

    void add(std::unique_ptr<Transfer> t) {
        t->url = register_url_credentials(t->url); // never shown, never sent elsewhere
        transfers_.push_back(std::move(t));
    }

    void run() {
        for (;;) {
            auto now = Clock::now();
            unsigned active = 0;
            bool waiting = false;
            Clock::time_point earliest = Clock::time_point::max();
            for (auto& t : transfers_) {
                if (t->finished) continue;
                if (t->easy != nullptr)
                    ++active;
                else {
                    waiting = true;
                    earliest = std::min(earliest, t->not_before);
                }
            }
            for (auto& t : transfers_) {
                if (t->finished || t->easy != nullptr || t->not_before > now ||
                    active >= std::max(1u, options_.parallel))
                    continue;
                begin(*t);
                if (t->easy != nullptr) ++active;
            }
            if (active == 0 && !waiting) break;
            int running = 0;
            curl_multi_perform(multi_, &running);
            int left = 0;
            while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
                if (msg->msg != CURLMSG_DONE) continue;
                Transfer* t = nullptr;
                curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &t);
                complete(*t, msg->data.result);
            }
            check_limits();
            stop_abandoned();
            stop_interrupted();
            report_progress();
            if (active == 0 && waiting) {
                auto wait = std::min<Clock::duration>(earliest - Clock::now(),
                                                      std::chrono::milliseconds(200));
                if (wait > Clock::duration::zero()) std::this_thread::sleep_for(wait);
            } else {
                curl_multi_poll(multi_, nullptr, 0, 100, nullptr);
            }
        }
    }

private:
    void drop(Transfer& t) {
        if (t.easy != nullptr) {
            curl_multi_remove_handle(multi_, t.easy);
            curl_easy_cleanup(t.easy);
            t.easy = nullptr;
        }
        if (t.out.is_open()) t.out.close();
    }

    // Ends `t`'s progress line as failed and stops every transfer.
    void stop_all(Transfer& t) {
        if (options_.progress && t.progress_id >= 0)
            options_.progress->finish(t.progress_id, false);
        for (auto& other : transfers_) {
            drop(*other);
            if (options_.progress && other->progress_id >= 0 && other.get() != &t)
                options_.progress->finish(other->progress_id, false, "stopped");
        }
    }

    // `code`: the failure's name for scripts (error.h); a download fails on the network unless
    // the caller says otherwise.
    [[noreturn]] void fail(Transfer& t, const std::string& message, bool input = false,
                           const char* code = "network") {
        stop_all(t);
        if (input) fail_input(message, code);
        fail_operation(message, code);
    }

    // Not the file that was asked for (code "checksum", with what differed).
    [[noreturn]] void fail_mismatch(Transfer& t, const std::string& message, const DownloadMismatch& m) {
        stop_all(t);
        throw DownloadMismatchError(message, m);
    }

    // Prepares the part file (resuming what is there) and starts one attempt.
    void begin(Transfer& t) {
        t.received = 0;
        t.write_error.clear();
        t.write_errno = 0;
        t.abort_reason.clear();
        t.abort_mismatch.reset();
        t.checked_length = false;
        t.errbuf[0] = 0;
        t.samples.clear();
        t.samples.emplace_back(Clock::now(), 0);
        if (t.first_start == Clock::time_point{}) t.first_start = Clock::now();
        std::error_code ec;
        if (t.memory != nullptr) {
            t.memory->clear();
            t.resumed = 0;
        } else {
            std::uint64_t have = fs::exists(t.part, ec) ? fs::file_size(t.part, ec) : 0;
            if (ec) have = 0;
            if (t.request->expected_size && have > t.request->expected_size) {
                platform::remove_shared_file(t.part, ec);
                have = 0;
            }
            if (have != t.hashed) {
                // Feed what an earlier run left behind into the checksum.
                t.hash = Sha256();
                t.hashed = 0;
                if (have > 0) {
                    std::ifstream in(t.part, std::ios::binary);
                    std::vector<char> buf(1 << 20);
                    while (in && t.hashed < have) {
                        in.read(buf.data(), static_cast<std::streamsize>(std::min<std::uint64_t>(
                                                buf.size(), have - t.hashed)));
                        auto got = static_cast<std::size_t>(in.gcount());
                        t.hash.update(buf.data(), got);
                        t.hashed += got;
                    }
                    if (t.hashed != have) {
                        t.hash = Sha256();
                        t.hashed = 0;
                        have = 0;
                        platform::remove_shared_file(t.part, ec);
                    }
                }
            }
            t.resumed = have;
            fs::create_directories(t.part.parent_path(), ec);
            if (!t.on_signal.watching()) t.on_signal.watch(t.part);
            if (int err = platform::create_file_for_writing(t.part))
                fail(t, "cannot write " + t.part.u8string() + ": " + platform::error_text(err), false,
                     write_error_code(err));
            if (int err = t.out.open(t.part, have > 0 ? platform::SharedFile::Mode::Append
                                                      : platform::SharedFile::Mode::Truncate))
                fail(t, "cannot write " + t.part.u8string() + ": " + platform::error_text(err), false,
                     write_error_code(err));
            if (t.request->tap) t.request->tap->attempt(t.part, have);
            if (t.request->expected_size && have == t.request->expected_size) {
                // Complete from an earlier run: only the checksum is left to check.
                t.out.close();
                finish_file(t);
                return;
            }
        }
        if (options_.progress && t.progress_id < 0 && t.request != nullptr)
            t.progress_id = options_.progress->start("downloading", label_of(*t.request),
                                                     t.request->expected_size);
        // curl opens a file:// source with a plain open(), which waits forever on a FIFO: only a
        // regular file is handed over (stat does not open it).
        if (fs::path local = file_url_path(t.url); !local.empty()) {
            int err = 0;
            auto meta = platform::file_meta(local, &err);
            if (meta && meta->type != platform::FileMeta::Type::Regular) {
                t.finished = true;
                fail(t,
                     "download of " + t.url + " failed: " + local.u8string() + " is " +
                         platform::file_type_text(local) + ", not a file; check CVM_MIRROR",
                     true);
            }
        }
        CURL* e = curl_easy_init();
        t.easy = e;
        curl_easy_setopt(e, CURLOPT_URL, t.url.c_str());
        curl_easy_setopt(e, CURLOPT_PRIVATE, &t);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &on_write);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
        curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t.errbuf);
        curl_easy_setopt(e, CURLOPT_FAILONERROR, 1L);
        // Redirects are followed by complete(), each hop held to url_allowed (the rule for
        // CVM_MIRROR), and credentials go only to the origin they were given for.
        curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
        if (auto cred = credentials_for(t.url)) {
            curl_easy_setopt(e, CURLOPT_USERNAME, cred->first.c_str());
            curl_easy_setopt(e, CURLOPT_PASSWORD, cred->second.c_str());
        }
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(e, CURLOPT_USERAGENT, "cvm");
        curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 512L * 1024);
        curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https,http,file");
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, options_.connect_timeout_s);
        if (options_.stall_timeout_s > 0) {
            curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
            curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, options_.stall_timeout_s);
        }
        if (t.resumed > 0)
            curl_easy_setopt(e, CURLOPT_RESUME_FROM_LARGE, static_cast<curl_off_t>(t.resumed));
        curl_multi_add_handle(multi_, e);
    }

    void retry_later(Transfer& t, const std::string& why) {
        ++t.attempt;
        long delay = options_.retry_delay_ms << std::min(t.attempt - 1, 5u);
        delay = std::min(delay, 30000L);
        t.not_before = Clock::now() + std::chrono::milliseconds(delay);
        if (options_.progress)
            options_.progress->message(
                "retrying " + t.url + " in " +
                Progress::format_duration(static_cast<double>(delay) / 1000) + " (" + why + ")");
    }

    void restart_clean(Transfer& t) {
        std::error_code ec;
        platform::remove_shared_file(t.part, ec);
        t.hash = Sha256();
        t.hashed = 0;
        t.restarted_clean = true;
        t.not_before = Clock::now();
    }

    void finish_file(Transfer& t) {
        std::uint64_t size = t.resumed + t.received;
        const DownloadRequest& r = *t.request;
        std::string digest = t.hash.hex_digest();
        t.hash = Sha256();
        t.hashed = 0;
        bool size_ok = r.expected_size == 0 || size == r.expected_size;
        bool sum_ok = r.sha256.empty() || sha256_equal(digest, r.sha256);
        if (!size_ok || !sum_ok) {
            bool was_resumed = t.resumed > 0 && !t.restarted_clean;
            std::error_code ec;
            platform::remove_shared_file(t.part, ec);
            if (was_resumed) {
                // The partial file may have come from another version of the file: once more,
                // from the start.
                restart_clean(t);
                return;
            }
            t.finished = true;
            DownloadMismatch m;
            m.check = sum_ok ? DownloadMismatch::Check::Size : DownloadMismatch::Check::Sha256;
            m.expected_sha256 = r.sha256;
            m.actual_sha256 = digest;
            m.expected_size = r.expected_size;
            m.actual_size = size;
            fail_mismatch(t, "download of " + t.url + " failed: " + m.describe() +
                        "; the file was deleted, run the command again (if it repeats, the "
                        "mirror or manifest is wrong)",
                 m);
        }
        std::error_code ec;
        platform::rename_shared_file(t.part, r.destination, ec);
        if (ec)
            fail(t, "cannot move " + t.part.u8string() + " to " + r.destination.u8string() + ": " +
                        ec.message(),
                 false, write_error_code(ec.value()));
        t.kept = true;
        t.on_signal.release();
        t.finished = true;
        if (r.tap) r.tap->verified(r.destination, digest);
        if (options_.progress && t.progress_id >= 0) {
            options_.progress->update(t.progress_id, size, size);
            options_.progress->finish(t.progress_id, true);
        }
    }

    // A 3xx answer: the next hop, when it is a URL cvm would accept as CVM_MIRROR (https://, or
    // http:// to this machine); else the transfer fails naming where it led.
    void follow_redirect(Transfer& t, const std::string& location, long status) {
        const std::string from = t.url;
        if (location.empty())
            fail(t, "download of " + from + " failed: HTTP " + std::to_string(status) +
                        " without a location");
        const std::string to = without_url_credentials(location);
        std::string why;
        if (!file_url_path(location).empty()) {
            why = "a redirect to a local file is never followed";
        } else if (url_allowed(location, options_, &why) && ++t.redirects > 10) {
            why = "more than 10 redirects";
        }
        if (!why.empty()) {
            t.finished = true;
            fail(t, "download of " + from + " failed: the server redirects to " + to +
                        ", which is refused: " + why);
        }
        t.url = to;
        t.not_before = Clock::now();
    }

    void complete(Transfer& t, CURLcode code) {
        long status = 0;
        curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
        std::string detail = transfer_problem(code);
        std::string location;
        if (code == CURLE_OK && status >= 300 && status < 400) {
            char* url = nullptr;
            if (curl_easy_getinfo(t.easy, CURLINFO_REDIRECT_URL, &url) == CURLE_OK && url)
                location = url;
        }
        drop(t);
        if (code == CURLE_OK && status >= 300 && status < 400) {
            follow_redirect(t, location, status);
            return;
        }
        if (code == CURLE_WRITE_ERROR && !t.abort_reason.empty()) {
            t.finished = true;
            // Beyond a known size it is not the file that was asked for (as a checksum mismatch).
            const std::string message = "download of " + t.url + " failed: " + t.abort_reason +
                                        "; the partial file was deleted (if it repeats, the mirror or "
                                        "manifest is wrong)";
            if (t.abort_mismatch) fail_mismatch(t, message, *t.abort_mismatch);
            fail(t, message);
        }
        if (code == CURLE_WRITE_ERROR && !t.write_error.empty()) {
            t.finished = true;
            if (t.memory != nullptr)
                fail(t, "download of " + t.url + " failed: " + t.write_error, true);
            const char* why = write_error_code(t.write_errno);
            const bool full = std::strcmp(why, "no_space") == 0;
            fail(t, "cannot write " + t.part.u8string() + ": " + t.write_error +
                        (full ? " (free space in the download cache and run again)" : ""),
                 false, why);
        }
        if (code == CURLE_OK) {
            if (t.memory != nullptr) {
                t.finished = true;
                return;
            }
            finish_file(t);
            return;
        }
        if (t.memory == nullptr && t.resumed > 0 &&
            (code == CURLE_RANGE_ERROR || (code == CURLE_HTTP_RETURNED_ERROR && status == 416))) {
            // The server cannot continue the partial file (or it is already complete).
            if (status == 416 && t.request->expected_size == 0 && !t.restarted_clean) {
                t.received = 0;
                finish_file(t); // verifies; restarts clean on mismatch
                return;
            }
            restart_clean(t);
            return;
        }
        if (code == CURLE_HTTP_RETURNED_ERROR)
            detail = "HTTP " + std::to_string(status) + (status == 404 ? " (not found)" : "");
        if (code == CURLE_OPERATION_TIMEDOUT && t.received == 0 && status == 0)
            detail = "no answer within the timeout (CVM_CONNECT_TIMEOUT, CVM_STALL_TIMEOUT)";
        else if (code == CURLE_OPERATION_TIMEDOUT)
            detail = "stalled: no data for " + std::to_string(options_.stall_timeout_s) +
                     " s (CVM_STALL_TIMEOUT)";
        if (unreachable(code)) {
            ++t.unreachable;
            detail = unreachable_text(code, t.url);
        }
        if (transient(code, status) && t.attempt < options_.retries &&
            (!unreachable(code) || t.unreachable < 2)) {
            retry_later(t, detail);
            return;
        }
        t.finished = true;
        const std::string failed =
            "download of " + t.url + " failed: " + detail +
            (t.attempt > 0 ? " (after " + std::to_string(t.attempt + 1) + " attempts)" : "");
        if (unreachable(code)) { // the installer adds what to fetch by other means (offline_fix)
            stop_all(t);
            throw UnreachableError(failed + "; no network? Set CVM_MIRROR to a mirror you can reach", t.url);
        }
        std::string hint = code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE
                               ? "; the server's certificate was not accepted"
                           : status == 404 ? "; check the version, or CVM_MIRROR"
                                           : "";
        fail(t, failed + hint);
    }

    // Stops (for a retry) a transfer slower than min_rate over the last rate window, and gives
    // up on one past its deadline: deadline + size / deadline_rate seconds after
    // its first attempt began.
    void check_limits() {
        auto now = Clock::now();
        for (auto& tp : transfers_) {
            Transfer& t = *tp;
            if (t.finished || t.easy == nullptr) continue;
            if (options_.deadline_s > 0) {
                std::uint64_t size = t.request && t.request->expected_size
                                         ? t.request->expected_size
                                     : t.memory ? t.max_size
                                                : options_.max_size;
                curl_off_t length = -1;
                curl_easy_getinfo(t.easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
                if (length >= 0 && (!t.request || t.request->expected_size == 0))
                    size = t.resumed + static_cast<std::uint64_t>(length);
                double limit =
                    static_cast<double>(options_.deadline_s) +
                    (options_.deadline_rate > 0
                         ? static_cast<double>(size) / static_cast<double>(options_.deadline_rate)
                         : 0.0);
                double spent = std::chrono::duration<double>(now - t.first_start).count();
                if (spent > limit) {
                    drop(t);
                    t.finished = true;
                    fail(t, "download of " + t.url + " failed: not finished after " +
                                Progress::format_duration(spent) + ", its deadline (" +
                                std::to_string(options_.deadline_s) + " s plus " +
                                bytes_text(size) + " at " + std::to_string(options_.deadline_rate) +
                                " bytes/s; CVM_DOWNLOAD_DEADLINE, CVM_DOWNLOAD_DEADLINE_RATE)");
                }
            }
            if (options_.min_rate == 0 || options_.rate_window_s <= 0) continue;
            auto window = std::chrono::seconds(options_.rate_window_s);
            auto& samples = t.samples;
            if (now - samples.back().first >= std::chrono::milliseconds(200))
                samples.emplace_back(now, t.received);
            while (samples.size() > 2 && now - samples[1].first >= window)
                samples.pop_front();
            if (now - samples.front().first < window) continue;
            double seconds = std::chrono::duration<double>(now - samples.front().first).count();
            double rate = static_cast<double>(t.received - samples.front().second) / seconds;
            if (rate >= static_cast<double>(options_.min_rate)) continue;
            std::string detail = "too slow: " + std::to_string(static_cast<std::uint64_t>(rate)) +
                                 " bytes/s over the last " +
                                 std::to_string(options_.rate_window_s) + " s, below the minimum " +
                                 std::to_string(options_.min_rate) +
                                 " bytes/s (CVM_DOWNLOAD_MIN_RATE, CVM_DOWNLOAD_RATE_WINDOW)";
            drop(t);
            if (t.attempt < options_.retries) {
                retry_later(t, detail);
                continue;
            }
            t.finished = true;
            fail(t, "download of " + t.url + " failed: " + detail +
                        (t.attempt > 0 ? " (after " + std::to_string(t.attempt + 1) + " attempts)"
                                       : ""));
        }
    }

    // Ctrl-C or SIGTERM: the run stops at once, so the install unwinds and removes its files
    // itself, rather than waiting for bytes (a stalled server) until the signal's grace period
    // ends and the watcher removes them (on Windows it cannot remove a file still open).
    void stop_interrupted() {
        if (!platform::interrupted()) return;
        for (auto& t : transfers_)
            if (!t->finished) {
                t->finished = true;
                fail(*t, "download of " + t->url + " stopped: interrupted");
            }
    }

    // A download nothing will read any more (another archive of the install could not be
    // extracted) stops the whole run at once.
    void stop_abandoned() {
        for (auto& t : transfers_)
            if (!t->finished && t->request != nullptr && t->request->tap &&
                t->request->tap->abandoned()) {
                t->finished = true;
                fail(*t, "download of " + t->url + " stopped: the install failed");
            }
    }

    void report_progress() {
        if (!options_.progress) return;
        for (auto& t : transfers_) {
            if (t->finished || t->easy == nullptr || t->progress_id < 0) continue;
            curl_off_t total = 0;
            curl_easy_getinfo(t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &total);
            std::uint64_t all = total > 0 ? t->resumed + static_cast<std::uint64_t>(total)
                                          : t->request->expected_size;
            options_.progress->update(t->progress_id, t->resumed + t->received, all);
        }
        options_.progress->tick();
    }

    DownloadOptions options_;
    CURLM* multi_ = nullptr;
    std::vector<std::unique_ptr<Transfer>> transfers_;
};

} // namespace

fs::path file_url_path(const std::string& url) {
    if (url.rfind("file:", 0) != 0) return {};
    auto parts = parse_url(url);
    if (!parts || parts->path.empty()) return {};
    std::string p = parts->path;
    // file:///C:/x on Windows
    if (p.size() >= 3 && p[0] == '/' && std::isalpha(static_cast<unsigned char>(p[1])) &&
        p[2] == ':')
        p.erase(0, 1);
    return fs::u8path(p);
}

std::string register_url_credentials(const std::string& url) {
    UrlCredentials c = split_url_credentials(url);
    if (!c.present) return url;
    CredentialTable& table = credential_table();
    std::lock_guard<std::mutex> lock(table.mutex);
    table.by_origin[c.origin] = {c.user, c.password};
    return c.url;
}

bool url_allowed(const std::string& url, const DownloadOptions& options, std::string* why) {
    auto parts = parse_url(url);
    auto refuse = [&](const std::string& reason) {
        if (why) *why = reason;
        return false;
    };
    if (!parts) return refuse("\"" + without_url_credentials(url) + "\" is not a URL");
    std::string scheme = parts->scheme;
    std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (scheme == "https" || scheme == "file") return true;
    if (scheme == "http") {
        if (loopback(parts->host) || options.allow_insecure_http) return true;
        return refuse("plain http:// is only used for this machine (127.0.0.1, localhost, ::1); "
                      "use https://, or set CVM_ALLOW_HTTP=1 if you trust the network");
    }
    return refuse("unsupported URL scheme \"" + parts->scheme + "\" (use https://, or file://)");
}

void download_all(const std::vector<DownloadRequest>& requests, const DownloadOptions& options) {
    Downloader downloader(options);
    bool any = false;
    for (const auto& r : requests) {
        std::string why;
        if (!url_allowed(r.url, options, &why))
            fail_input("cannot download " + without_url_credentials(r.url) + ": " + why);
    }
    // Another cvm fetching the same file waits here, then finds it in the cache. Locks are
    // taken in name order so two processes never wait on each other.
    std::vector<fs::path> lock_paths;
    for (const auto& r : requests)
        lock_paths.push_back(fs::path(r.destination.u8string() + ".lock"));
    std::sort(lock_paths.begin(), lock_paths.end());
    lock_paths.erase(std::unique(lock_paths.begin(), lock_paths.end()), lock_paths.end());
    std::vector<std::unique_ptr<platform::FileLock>> locks;
    for (const auto& p : lock_paths) {
        std::error_code ec;
        fs::create_directories(p.parent_path(), ec);
        locks.push_back(std::make_unique<platform::FileLock>());
        try {
            locks.back()->acquire(p);
        } catch (const std::exception& e) {
            fail_operation(e.what());
        }
    }
    for (const auto& r : requests) {
        std::error_code ec;
        if (fs::is_regular_file(r.destination, ec)) {
            // In the cache already: accepted only with the right checksum.
            if (!r.sha256.empty() && sha256_equal(sha256_file(r.destination), r.sha256)) {
                if (options.progress) options.progress->message("using cached " + label_of(r));
                if (r.tap) r.tap->verified(r.destination, r.sha256);
                continue;
            }
            if (r.sha256.empty() &&
                (r.expected_size == 0 || fs::file_size(r.destination, ec) == r.expected_size)) {
                if (r.tap) r.tap->verified(r.destination, "");
                continue;
            }
            fs::remove(r.destination, ec);
        }
        auto t = std::make_unique<Transfer>();
        t->request = &r;
        t->url = r.url;
        t->part = r.destination;
        t->part += ".part";
        t->max_size = options.max_size;
        downloader.add(std::move(t));
        any = true;
    }
    if (any) downloader.run();
}

std::string fetch_text(const std::string& url, const DownloadOptions& options,
                       std::uint64_t max_size) {
    std::string why;
    if (!url_allowed(url, options, &why))
        fail_input("cannot download " + without_url_credentials(url) + ": " + why);
    std::string body;
    Downloader downloader(options);
    auto t = std::make_unique<Transfer>();
    t->url = url;
    t->memory = &body;
    t->max_size = max_size;
    downloader.add(std::move(t));
    downloader.run();
    return body;
}

} // namespace cvm::install
