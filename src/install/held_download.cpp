#include "install/held_download.h"

#include <ctime>

#include "install/error.h"
#include "install/sha256.h"
#include "platform/platform.h"

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

std::string utc_now() {
    std::tm tm = platform::utc_time(std::time(nullptr));
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

// `name` (`where`: " from URL", " at URL") is not the file `want` holds it to. `done`: what
// became of it ("deleted, ").
[[noreturn]] void fail_differs(const std::string& name, const std::string& where, const HeldSum& want,
                               const DownloadMismatch& mismatch, const std::string& done) {
    fail_operation(name + where + " differs from " + want.from + " (" + mismatch.describe() + "); " + done +
                       "nothing was installed. " + want.remedy,
                   "checksum");
}

} // namespace

HeldSum held_sum_for(const std::string& name, const std::string& registry_sha256, std::uint64_t registry_size,
                     const std::string& registry_source, const fs::path& record_file,
                     const std::optional<std::string>& pinned) {
    HeldSum want;
    if (!registry_sha256.empty()) {
        want.sha256 = registry_sha256;
        want.size = registry_size;
        want.from = "the SHA-256 in cvm's registry (from " + registry_source + ")";
        want.remedy = "Check CVM_MIRROR; if NVIDIA's own copy differs, report it to cvm";
    } else {
        want.first_use = true;
        if ((want.record = find_first_use(record_file, name))) {
            const FirstUseRecord& first = *want.record;
            want.sha256 = first.sha256;
            want.size = first.size;
            want.from = "the SHA-256 trusted on first use (first downloaded " +
                        (first.first_use.empty() ? std::string("earlier") : first.first_use) + ", recorded in " +
                        record_file.u8string() + ")";
            want.remedy = "Check CVM_MIRROR; only if you know NVIDIA replaced the archive, remove its record from " +
                          record_file.u8string() + " and install again";
        } else if (pinned) {
            want.sha256 = *pinned;
            want.from = "the SHA-256 the project's cvm.lock pins (trusted on first use where it was locked)";
            want.remedy = "Check CVM_MIRROR, or run `cvm lock` again where the toolchain is installed";
        }
    }
    if (pinned && !sha256_equal(*pinned, want.sha256))
        fail_operation("the lock requires sha256 " + *pinned + " for " + name + ", but " + want.from + " says " +
                           want.sha256 + "; nothing was downloaded. Run `cvm lock` again where the toolchain is "
                           "installed",
                       "checksum");
    return want;
}

fs::path fetch_held(const std::string& name, const std::string& url, const HeldSum& want, const fs::path& cache_dir,
                    const DownloadOptions& options) {
    fs::path file = file_url_path(url);
    if (!file.empty()) {
        // A folder mirror: nothing to copy, but the sum still decides.
        std::error_code ec;
        if (!fs::is_regular_file(file, ec))
            fail_operation("the mirror has no " + name + " (looked for " + file.u8string() + "); check CVM_MIRROR",
                           "not_found");
        if (want.sha256.empty()) return file;
        DownloadMismatch m;
        m.expected_size = want.size;
        m.actual_size = fs::file_size(file, ec);
        m.expected_sha256 = want.sha256;
        if (want.size != 0 && m.actual_size != want.size)
            m.check = DownloadMismatch::Check::Size;
        else if (sha256_equal(m.actual_sha256 = sha256_file(file), want.sha256))
            return file;
        fail_differs(name, " at " + url, want, m, "");
    }
    std::string why;
    if (!url_allowed(url, options, &why)) fail_input("cannot download " + url + ": " + why);
    fs::create_directories(cache_dir);
    DownloadRequest request;
    request.url = url;
    request.destination = cache_dir / name;
    request.sha256 = want.sha256;
    request.expected_size = want.size;
    std::error_code ec;
    // Without a sum, a cached copy proves nothing: download it again.
    if (want.sha256.empty()) fs::remove(request.destination, ec);
    try {
        download_all({request}, options);
    } catch (const DownloadMismatchError& e) {
        fail_differs(name, " from " + url, want, e.mismatch(), "deleted, ");
    }
    return request.destination;
}

std::string record_held_first_use(const std::string& name, const std::string& url, const std::string& sha256,
                                  const fs::path& file, const fs::path& record_file, const fs::path& locks_dir,
                                  const std::function<void(const std::string&)>& undo) {
    FirstUseRecord rec;
    rec.name = name;
    rec.sha256 = sha256;
    std::error_code ec;
    rec.size = fs::file_size(file, ec);
    rec.url = url;
    rec.first_use = utc_now();
    FirstUseRecord kept = record_first_use(record_file, locks_dir, rec);
    if (!sha256_equal(kept.sha256, rec.sha256))
        undo(name + " from " + url + " (sha256 " + rec.sha256 + ") is not the archive trusted on first use in " +
             record_file.u8string() + " (sha256 " + kept.sha256 + "); nothing was installed: check CVM_MIRROR");
    return name + ": no public source gives its SHA-256, so this first download's (" + rec.sha256 +
           ") is trusted on first use: recorded in " + record_file.u8string() + ", later downloads must match it";
}

} // namespace cvm::install
