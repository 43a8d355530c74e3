// Installer::install_legacy_cudnn: a cuDNN from before NVIDIA's manifests, from the public
// folder <mirror>/redist/cudnn/v<X.Y.Z>/. The archive is held to the SHA-256 (and size) a public
// source gives (registry/cudnn_archives.toml), else to the one recorded when it was first
// downloaded (first_use.h), else to the one a project's cvm.lock pins; with none of them, the
// first download is trusted and its sum recorded.
#include "install/error.h"
#include "install/first_use.h"
#include "install/installer.h"
#include "install/legacy_cudnn.h"
#include "install/progress.h"
#include "install/sha256.h"
#include "install/version_lock.h"
#include "registry/registry.h"

#include <ctime>

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

// Where the sum an archive is held to comes from.
struct ExpectedSum {
    std::string sha256; // empty: none yet (trusted on first use)
    std::uint64_t size = 0;
    std::string from;   // "cvm's registry (<source>)", "the SHA-256 trusted on first use ..."
    std::string remedy; // what to do when a download differs
};

std::string utc_now() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
#ifdef _WIN32
    gmtime_s(&tm, &t);
#else
    gmtime_r(&t, &tm);
#endif
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

// "checksum mismatch: expected sha256 X, got Y" (or "the server announces N bytes, more than the
// M bytes expected") out of the downloader's message.
std::string mismatch_detail(const std::string& message) {
    const std::string failed = " failed: ";
    auto at = message.find(failed);
    if (at == std::string::npos) return "it differs";
    std::string detail = message.substr(at + failed.size());
    detail = detail.substr(0, detail.find(';'));
    const std::string manifest = " the manifest gives";
    if (auto m = detail.find(manifest); m != std::string::npos) detail.replace(m, manifest.size(), " expected");
    return detail;
}

} // namespace

InstallResult Installer::install_legacy_cudnn(const registry::CudnnRelease& rel, const std::string& cuda) {
    const std::string& host = options_.host_platform;
    LegacyArchive archive = choose_legacy_archive(rel, cuda, host);
    const std::string id = CudnnId{rel.version, archive.build->cuda}.str();
    const std::string& name = archive.name;

    auto version_lock = lock_version(store_, Kind::Cudnn, id, options_.progress);
    if (auto existing = options_.reinstall ? std::nullopt : store_.find(Kind::Cudnn, id)) {
        if (options_.progress) options_.progress->message("cuDNN " + id + " is already installed");
        return {Kind::Cudnn, id, existing->path, true, {}};
    }

    // The sum it is held to, decided before anything is downloaded.
    const fs::path record_file = first_use_file(store_);
    ExpectedSum want;
    std::optional<std::string> pinned;
    if (auto it = options_.pinned_sha256.find(name); it != options_.pinned_sha256.end()) pinned = it->second;
    auto known = load_known_archive_sums();
    std::optional<FirstUseRecord> first;
    if (auto k = known.find(name); k != known.end()) {
        want = {k->second.sha256, k->second.size, "the SHA-256 in cvm's registry (from " + k->second.source + ")",
                "Check CVM_MIRROR; if NVIDIA's own copy differs, report it to cvm"};
    } else if ((first = find_first_use(record_file, name))) {
        want = {first->sha256, first->size,
                "the SHA-256 trusted on first use (first downloaded " +
                    (first->first_use.empty() ? std::string("earlier") : first->first_use) + ", recorded in " +
                    record_file.u8string() + ")",
                "Check CVM_MIRROR; only if you know NVIDIA replaced the archive, remove its record from " +
                    record_file.u8string() + " and install again"};
    } else if (pinned) {
        want = {*pinned, 0, "the SHA-256 the project's cvm.lock pins (trusted on first use where it was locked)",
                "Check CVM_MIRROR, or run `cvm lock` again where the toolchain is installed"};
    }
    if (pinned && !sha256_equal(*pinned, want.sha256))
        fail_operation("the lock requires sha256 " + *pinned + " for " + name + ", but " + want.from +
                           " says " + want.sha256 + "; nothing was downloaded. Run `cvm lock` again where "
                           "the toolchain is installed",
                       "checksum");

    const std::string url = options_.mirror + "/" + archive.path;
    fs::path file = file_url_path(url);
    if (!file.empty()) {
        // A folder mirror: nothing to copy, but the sum still decides.
        std::error_code ec;
        if (!fs::is_regular_file(file, ec))
            fail_operation("the mirror has no " + name + " (looked for " + file.u8string() +
                               "); check CVM_MIRROR",
                           "not_found");
        std::uint64_t size = fs::file_size(file, ec);
        if (!want.sha256.empty()) {
            std::string got = sha256_file(file);
            if ((want.size != 0 && size != want.size) || !sha256_equal(got, want.sha256))
                fail_operation(name + " at " + url + " differs from " + want.from + " (got sha256 " + got + ", " +
                                   std::to_string(size) + " bytes); nothing was installed. " + want.remedy,
                               "checksum");
        }
    } else {
        std::string why;
        if (!url_allowed(url, options_.download, &why)) fail_input("cannot download " + url + ": " + why);
        fs::path cache = store_.cache_dir() / "downloads";
        fs::create_directories(cache);
        DownloadRequest request;
        request.url = url;
        request.destination = cache / name;
        request.sha256 = want.sha256;
        request.expected_size = want.size;
        std::error_code ec;
        // Without a sum, a cached copy proves nothing: download it again.
        if (want.sha256.empty()) fs::remove(request.destination, ec);
        try {
            download_all({request}, options_.download);
        } catch (const InstallError& e) {
            if (e.code() != "checksum") throw;
            fail_operation(name + " from " + url + " differs from " + want.from + " (" +
                               mismatch_detail(e.what()) + "); deleted, nothing was installed. " + want.remedy,
                           "checksum");
        }
        file = request.destination;
    }

    if (options_.progress && !want.sha256.empty())
        options_.progress->message(name + ": sha256 checked against " + want.from);
    // install_file learns the id from the contents; when it is this one, the lock is ours.
    held_lock_ = "cudnn-" + id;
    if (known.find(name) == known.end()) first_use_archive_ = name;
    InstallResult result;
    try {
        result = install_file(file, url);
    } catch (...) {
        held_lock_.clear();
        first_use_archive_.clear();
        throw;
    }
    held_lock_.clear();
    first_use_archive_.clear();
    auto undo = [&](const std::string& message) {
        if (!result.already_installed) {
            try {
                store_.remove(result.kind, result.id);
            } catch (const std::exception&) {
            }
        }
        fail_input(message, "checksum");
    };
    if (result.id != id)
        undo("the archive " + name + " holds " + (result.kind == Kind::Cuda ? "CUDA " : "cuDNN ") + result.id +
             ", not cuDNN " + id + "; nothing was installed: check CVM_MIRROR");
    if (known.find(name) == known.end() && !first) {
        // Trusted on first use: the sum install_file computed beside the extraction is recorded.
        auto entry = store_.find(Kind::Cudnn, id);
        if (!entry || entry->archives.empty()) return result;
        FirstUseRecord rec;
        rec.name = name;
        rec.sha256 = entry->archives.front().sha256;
        std::error_code ec;
        rec.size = fs::file_size(file, ec);
        rec.url = url;
        rec.first_use = utc_now();
        FirstUseRecord kept = record_first_use(record_file, store_.locks_dir(), rec);
        if (!sha256_equal(kept.sha256, rec.sha256))
            undo(name + " from " + url + " (sha256 " + rec.sha256 + ") is not the archive trusted on first use in " +
                 record_file.u8string() + " (sha256 " + kept.sha256 + "); nothing was installed: check CVM_MIRROR");
        if (options_.progress)
            options_.progress->message(name + ": no public source gives its SHA-256, so this first download's (" +
                                       rec.sha256 + ") is trusted on first use: recorded in " + record_file.u8string() +
                                       ", later downloads must match it");
    }
    return result;
}

} // namespace cvm::install
