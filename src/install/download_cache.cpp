// The download cache (download_cache.h): files reused, and their locks.
#include "install/download_cache.h"

#include "install/error.h"
#include "install/sha256.h"

#include <algorithm>
#include <filesystem>

namespace cvm::install {

namespace fs = std::filesystem;

std::optional<std::string> reuse_cached_download(const DownloadRequest& r) {
    std::error_code ec;
    if (!fs::is_regular_file(r.destination, ec)) return std::nullopt;
    if (!r.sha256.empty() && sha256_equal(sha256_file(r.destination), r.sha256)) return r.sha256;
    if (r.sha256.empty() &&
        (r.expected_size == 0 || fs::file_size(r.destination, ec) == r.expected_size))
        return std::string();
    fs::remove(r.destination, ec);
    return std::nullopt;
}

std::vector<std::unique_ptr<platform::FileLock>>
lock_download_destinations(const std::vector<DownloadRequest>& requests) {
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
    return locks;
}

} // namespace cvm::install
