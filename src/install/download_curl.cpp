// The transfer loop of downloads through libcurl (download.h): the transfers' attempts on one
// curl multi handle, each attempt's part file opened and resumed, redirects checked hop by hop,
// each attempt's end (kept, retried or failed), the limits and Ctrl-C watched as it runs. One
// transfer's state and body: download_transfer_curl; URLs: download_url*; what a failure means:
// download_errors_curl; limits, retries, the cache: download_limits, download_policy,
// download_cache.
#include "install/download.h"

#include "config/url_credentials.h"

#include "install/download_cache.h"
#include "install/download_errors_curl.h"
#include "install/download_limits.h"
#include "install/download_policy.h"
#include "install/download_tap.h"
#include "install/download_transfer_curl.h"
#include "install/error.h"
#include "install/progress.h"
#include "install/sha256.h"
#include "platform/platform.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

void global_init() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
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

    // Runs every transfer to its end: starts those due (at most `parallel` at once), lets libcurl
    // move the bytes, ends the attempts it finished, holds the others to their limits, and waits.
    void run() {
        for (;;) {
            Survey survey = survey_transfers();
            unsigned active = start_due(survey.active);
            if (active == 0 && !survey.waiting) break;
            int running = 0;
            curl_multi_perform(multi_, &running);
            complete_finished();
            check_limits();
            stop_abandoned();
            stop_interrupted();
            report_progress();
            wait_for_work(active, survey);
        }
    }

private:
    // The transfers under way and those waiting to start (a retry's backoff), before a round.
    struct Survey {
        unsigned active = 0;                                   // under way
        bool waiting = false;                                  // some wait to start
        Clock::time_point earliest = Clock::time_point::max(); // the first of them may start then
    };

    Survey survey_transfers() const {
        Survey w;
        for (auto& t : transfers_) {
            if (t->finished) continue;
            if (t->easy != nullptr)
                ++w.active;
            else {
                w.waiting = true;
                w.earliest = std::min(w.earliest, t->not_before);
            }
        }
        return w;
    }

    // Starts the transfers due now while fewer than `parallel` are under way; the number under way.
    unsigned start_due(unsigned active) {
        auto now = Clock::now();
        for (auto& t : transfers_) {
            if (t->finished || t->easy != nullptr || t->not_before > now ||
                active >= std::max(1u, options_.parallel))
                continue;
            begin(*t);
            if (t->easy != nullptr) ++active;
        }
        return active;
    }

    // Ends each attempt libcurl has finished.
    void complete_finished() {
        int left = 0;
        while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
            if (msg->msg != CURLMSG_DONE) continue;
            Transfer* t = nullptr;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &t);
            complete(*t, msg->data.result);
        }
    }

    // Sleeps until a retry is due when nothing is under way, else until libcurl has work.
    void wait_for_work(unsigned active, const Survey& survey) {
        if (active == 0 && survey.waiting) {
            auto wait = std::min<Clock::duration>(survey.earliest - Clock::now(),
                                                  std::chrono::milliseconds(200));
            if (wait > Clock::duration::zero()) std::this_thread::sleep_for(wait);
        } else {
            curl_multi_poll(multi_, nullptr, 0, 100, nullptr);
        }
    }

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
    [[noreturn]] void fail_mismatch(Transfer& t, const std::string& message,
                                    const DownloadMismatch& m) {
        stop_all(t);
        throw DownloadMismatchError(message, m);
    }

    // " (after 3 attempts)" once `t` was retried, else nothing.
    static std::string after_attempts(const Transfer& t) {
        return t.attempt > 0 ? " (after " + std::to_string(t.attempt + 1) + " attempts)" : "";
    }

    // Prepares the part file (resuming what is there) and starts one attempt.
    void begin(Transfer& t) {
        reset_attempt(t);
        if (t.memory != nullptr) {
            t.memory->clear();
            t.resumed = 0;
        } else if (!open_part_file(t)) {
            return; // complete from an earlier run: finish_file has checked it
        }
        if (options_.progress && t.progress_id < 0 && t.request != nullptr)
            t.progress_id = options_.progress->start("downloading", download_label(*t.request),
                                                     t.request->expected_size);
        refuse_special_source(t);
        t.easy = start_easy(t, options_);
        curl_multi_add_handle(multi_, t.easy);
    }

    // What one attempt counts starts afresh.
    void reset_attempt(Transfer& t) {
        t.received = 0;
        t.write_error.clear();
        t.write_errno = 0;
        t.abort_reason.clear();
        t.abort_mismatch.reset();
        t.checked_length = false;
        t.errbuf[0] = 0;
        t.rate.restart(Clock::now());
        if (t.first_start == Clock::time_point{}) t.first_start = Clock::now();
    }

    // Opens the part file to append to what it holds (or anew) and tells the tap; false when it
    // already holds the whole file, which finish_file has then checked.
    bool open_part_file(Transfer& t) {
        std::uint64_t have = resumable_bytes(t);
        t.resumed = have;
        std::error_code ec;
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
            return false;
        }
        return true;
    }

    // curl opens a file:// source with a plain open(), which waits forever on a FIFO: only a
    // regular file is handed over (stat does not open it).
    void refuse_special_source(Transfer& t) {
        fs::path local = file_url_path(t.url);
        if (local.empty()) return;
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

    void retry_later(Transfer& t, const std::string& why) {
        ++t.attempt;
        long delay = retry_delay_ms(options_, t.attempt);
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

    // The whole body is in the part file: kept when its size and checksum are the request's.
    void finish_file(Transfer& t) {
        std::uint64_t size = t.resumed + t.received;
        const DownloadRequest& r = *t.request;
        std::string digest = t.hash.hex_digest();
        t.hash = Sha256();
        t.hashed = 0;
        bool size_ok = r.expected_size == 0 || size == r.expected_size;
        bool sum_ok = r.sha256.empty() || sha256_equal(digest, r.sha256);
        if (!size_ok || !sum_ok) {
            refuse_wrong_file(t, size, digest, sum_ok);
            return;
        }
        keep_file(t, size, digest);
    }

    // A part file of the wrong size or checksum is removed: fetched once more from the start when
    // it was resumed (what an earlier run left may be another version of the file), else failed.
    void refuse_wrong_file(Transfer& t, std::uint64_t size, const std::string& digest,
                           bool sum_ok) {
        const DownloadRequest& r = *t.request;
        bool was_resumed = t.resumed > 0 && !t.restarted_clean;
        std::error_code ec;
        platform::remove_shared_file(t.part, ec);
        if (was_resumed) {
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
        fail_mismatch(t,
                      "download of " + t.url + " failed: " + m.describe() +
                          "; the file was deleted, run the command again (if it repeats, the "
                          "mirror or manifest is wrong)",
                      m);
    }

    // Renames the verified part file into place and reports it done.
    void keep_file(Transfer& t, std::uint64_t size, const std::string& digest) {
        const DownloadRequest& r = *t.request;
        std::error_code ec;
        platform::rename_shared_file(t.part, r.destination, ec);
        if (ec)
            fail(t,
                 "cannot move " + t.part.u8string() + " to " + r.destination.u8string() + ": " +
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

    // Ends one attempt that libcurl finished with `code`: a redirect followed, a body kept, a
    // resume refused started again, else the failure retried or reported.
    void complete(Transfer& t, CURLcode code) {
        long status = 0;
        curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
        const bool redirect = code == CURLE_OK && status >= 300 && status < 400;
        std::string location;
        if (redirect) {
            char* url = nullptr;
            if (curl_easy_getinfo(t.easy, CURLINFO_REDIRECT_URL, &url) == CURLE_OK && url)
                location = url;
        }
        drop(t);
        if (redirect) {
            follow_redirect(t, location, status);
            return;
        }
        if (code == CURLE_WRITE_ERROR) fail_stopped_write(t);
        if (code == CURLE_OK) {
            if (t.memory != nullptr)
                t.finished = true;
            else
                finish_file(t);
            return;
        }
        if (t.memory == nullptr && t.resumed > 0 &&
            (code == CURLE_RANGE_ERROR || (code == CURLE_HTTP_RETURNED_ERROR && status == 416))) {
            resume_refused(t, status);
            return;
        }
        retry_or_fail(t, code, status);
    }

    // The body was stopped by on_write: past its size (not the file asked for), or a write that
    // failed. Returns only when neither says why.
    void fail_stopped_write(Transfer& t) {
        if (!t.abort_reason.empty()) {
            t.finished = true;
            // Beyond a known size it is not the file that was asked for (as a checksum mismatch).
            const std::string message =
                "download of " + t.url + " failed: " + t.abort_reason +
                "; the partial file was deleted (if it repeats, the mirror or "
                "manifest is wrong)";
            if (t.abort_mismatch) fail_mismatch(t, message, *t.abort_mismatch);
            fail(t, message);
        }
        if (!t.write_error.empty()) {
            t.finished = true;
            if (t.memory != nullptr)
                fail(t, "download of " + t.url + " failed: " + t.write_error, true);
            const char* why = write_error_code(t.write_errno);
            const bool full = std::strcmp(why, "no_space") == 0;
            fail(t,
                 "cannot write " + t.part.u8string() + ": " + t.write_error +
                     (full ? " (free space in the download cache and run again)" : ""),
                 false, why);
        }
    }

    // The server cannot continue the partial file (or it is already complete): HTTP 416 for a
    // file of no known size is checked as it is, else it is fetched from the start.
    void resume_refused(Transfer& t, long status) {
        if (status == 416 && t.request->expected_size == 0 && !t.restarted_clean) {
            t.received = 0;
            finish_file(t); // verifies; restarts clean on mismatch
            return;
        }
        restart_clean(t);
    }

    // A failed attempt: tried again later when retry_failed_attempt says so, else the transfer
    // fails (an unreached host as UnreachableError).
    void retry_or_fail(Transfer& t, CURLcode code, long status) {
        const bool unreached = host_unreached(code);
        if (unreached) ++t.unreachable;
        const std::string detail =
            failure_detail(code, status, t.received, options_.stall_timeout_s, t.url);
        if (retry_failed_attempt(transient_failure(code, status), unreached, t.attempt,
                                 t.unreachable, options_)) {
            retry_later(t, detail);
            return;
        }
        t.finished = true;
        const std::string failed =
            "download of " + t.url + " failed: " + detail + after_attempts(t);
        if (unreached) { // the installer adds what to fetch by other means (offline_fix)
            stop_all(t);
            throw UnreachableError(
                failed + "; no network? Set CVM_MIRROR to a mirror you can reach", t.url);
        }
        fail(t, failed + failure_hint(code, status));
    }

    // Holds every transfer under way to its deadline and its minimum rate.
    void check_limits() {
        auto now = Clock::now();
        for (auto& tp : transfers_) {
            Transfer& t = *tp;
            if (t.finished || t.easy == nullptr) continue;
            check_deadline(t, now);
            check_rate(t, now);
        }
    }

    // Gives up on a transfer past its deadline: deadline + size / deadline_rate seconds after its
    // first attempt began.
    void check_deadline(Transfer& t, Clock::time_point now) {
        if (options_.deadline_s <= 0) return;
        std::uint64_t size = deadline_size(t, options_.max_size);
        double spent = std::chrono::duration<double>(now - t.first_start).count();
        if (spent <= deadline_seconds(options_, size)) return;
        drop(t);
        t.finished = true;
        fail(t, "download of " + t.url + " failed: " + past_deadline_text(options_, size, spent));
    }

    // Stops (for a retry) a transfer slower than min_rate over the last rate window.
    void check_rate(Transfer& t, Clock::time_point now) {
        std::optional<std::string> slow = t.rate.too_slow(now, t.received, options_);
        if (!slow) return;
        drop(t);
        if (retry_failed_attempt(true, false, t.attempt, 0, options_)) {
            retry_later(t, *slow);
            return;
        }
        t.finished = true;
        fail(t, "download of " + t.url + " failed: " + *slow + after_attempts(t));
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

// Every request's URL may be fetched under `options`, or none is.
void refuse_disallowed_urls(const std::vector<DownloadRequest>& requests,
                            const DownloadOptions& options) {
    for (const auto& r : requests) {
        std::string why;
        if (!url_allowed(r.url, options, &why))
            fail_input("cannot download " + without_url_credentials(r.url) + ": " + why);
    }
}

// In the cache already: reported verified, with the right checksum (download_cache.h).
bool found_in_cache(const DownloadRequest& r, const DownloadOptions& options) {
    std::optional<std::string> sum = reuse_cached_download(r);
    if (!sum) return false;
    if (!sum->empty() && options.progress)
        options.progress->message("using cached " + download_label(r));
    if (r.tap) r.tap->verified(r.destination, *sum);
    return true;
}

} // namespace

void download_all(const std::vector<DownloadRequest>& requests, const DownloadOptions& options) {
    Downloader downloader(options);
    refuse_disallowed_urls(requests, options);
    auto locks = lock_download_destinations(requests);
    bool any = false;
    for (const auto& r : requests) {
        if (found_in_cache(r, options)) continue;
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
