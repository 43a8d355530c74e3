#include "install/stream_extract.h"

#include "install/download_tap.h"
#include "install/error.h"
#include "install/sha256.h"
#include "install/zip_directory.h"
#include "install/zip_streamed.h"
#include "platform/platform.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

// Empties an extraction folder for a second extraction (folders made writable first).
void empty_folder(const fs::path& folder) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(folder, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_directory(ec) && !it->is_symlink(ec))
            fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    for (const auto& entry : fs::directory_iterator(folder)) {
        fs::remove_all(entry.path(), ec);
        if (ec)
            fail_operation("cannot empty " + folder.u8string() + " for a second extraction: " +
                           ec.message());
    }
}

// One job whose archive is downloading: extracted from the tap, then checked once the download
// is verified; extracted again from the complete file where the stream could not be used.
StreamResult stream_one(const StreamJob& job, DownloadTap& tap, const ExtractOptions& options) {
    StreamResult out;
    const std::string name = job.request.destination.filename().u8string();
    bool again = false;
    try {
        out.extracted = extract_archive_stream(tap, name, job.destination, options);
    } catch (const NotAnArchive&) {
        // Its first bytes say so, and they are what the complete file would start with: the rest
        // of the download (up to its size limit) is not waited for.
        tap.abandon();
        throw;
    } catch (const std::exception&) {
        // Decided below: the download's failure, if it failed, is the one to report; bytes that
        // were verified are extracted once more from the file, whose error then stands.
        again = true;
    }
    // An archive that ended holding nothing (a body of zeros reads as an empty tar) is no
    // install: the rest of the download, up to its size limit, is not waited for.
    if (!again && out.extracted.entries.empty() && out.extracted.format != ArchiveFormat::Zip) {
        tap.abandon();
        throw NotAnArchive("the archive " + name +
                           " holds no files; it is not an archive cvm can install (check the URL)");
    }
    if (tap.wait() == DownloadTap::Outcome::Failed)
        fail_operation("the download of " + name + " stopped");
    out.archive = tap.file();
    out.sha256 = tap.sha256();
    if (out.sha256.empty()) out.sha256 = sha256_file(out.archive);
    if (!again && out.extracted.format == ArchiveFormat::Zip)
        settle_streamed_zip(out.archive, job.destination, out.extracted, name, options);
    if (again) {
        empty_folder(job.destination);
        out.extracted = extract_archive(out.archive, job.destination, options);
        if (out.extracted.format == ArchiveFormat::Zip)
            check_zip_data(out.archive, job.destination, out.extracted, name);
    }
    return out;
}

} // namespace

std::vector<StreamResult> download_and_extract(const std::vector<StreamJob>& jobs,
                                               const DownloadOptions& download,
                                               unsigned parallel) {
    std::vector<DownloadRequest> requests;
    std::vector<std::shared_ptr<DownloadTap>> taps(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        if (jobs[i].request.url.empty()) continue;
        DownloadRequest r = jobs[i].request;
        taps[i] = std::make_shared<DownloadTap>(r.expected_size);
        r.tap = taps[i];
        requests.push_back(std::move(r));
    }
    unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
    unsigned workers = std::min<unsigned>(parallel != 0 ? parallel : cpus,
                                          static_cast<unsigned>(jobs.size()));
    ExtractOptions each;
    // Several archives keep the cores busy; one decoding thread each.
    each.threads = workers > 1 ? 1 : parallel;
    std::vector<StreamResult> results(jobs.size());
    std::atomic<std::size_t> next{0};
    std::atomic<bool> stop{false};
    std::mutex error_mutex;
    std::exception_ptr extract_error;
    std::exception_ptr own_error; // an extraction that failed by itself (its download verified)
    auto work = [&] {
        for (;;) {
            std::size_t i = next.fetch_add(1);
            if (i >= jobs.size() || stop.load()) return;
            try {
                ExtractOptions mine = each;
                mine.progress = jobs[i].progress;
                if (taps[i]) {
                    results[i] = stream_one(jobs[i], *taps[i], mine);
                } else {
                    results[i].archive = jobs[i].local;
                    results[i].extracted = extract_archive(jobs[i].local, jobs[i].destination, mine);
                }
            } catch (...) {
                // stream_one throws only once its download ended: a verified download means the
                // archive itself failed, and the other downloads are of no use any more.
                // (An abandoned tap: this archive gave up on its own download.)
                bool own = !taps[i] || taps[i]->abandoned() ||
                           taps[i]->wait() == DownloadTap::Outcome::Verified;
                std::lock_guard<std::mutex> lock(error_mutex);
                if (!extract_error) extract_error = std::current_exception();
                if (own && !own_error) own_error = std::current_exception();
                stop.store(true);
                if (own)
                    for (auto& tap : taps)
                        if (tap) tap->abandon();
            }
        }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < std::max(1u, workers); ++t)
        pool.emplace_back(work);
    std::exception_ptr download_error;
    try {
        download_all(requests, download);
    } catch (...) {
        download_error = std::current_exception();
    }
    // Whatever was not verified will not be: readers stop.
    for (auto& tap : taps)
        if (tap) tap->failed();
    for (auto& t : pool)
        t.join();
    // The downloads stopped for an archive that failed: its failure is the one to report.
    if (own_error) std::rethrow_exception(own_error);
    if (download_error) std::rethrow_exception(download_error);
    if (extract_error) std::rethrow_exception(extract_error);
    return results;
}

} // namespace cvm::install
