#pragma once
// The download cache (download_cache.cpp), without libcurl: which file already there is taken
// instead of a download, and the locks that keep two cvm processes from fetching one file at once.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "install/download.h"
#include "platform/platform.h"

namespace cvm::install {

// Whether the file already at r.destination is the one asked for, so that nothing is downloaded:
// with r.sha256, a file of that SHA-256; without, one of r.expected_size bytes (any when 0). The
// SHA-256 to report for it (r.sha256, empty without one) when it is; nullopt when not, after
// removing a regular file there that is another.
std::optional<std::string> reuse_cached_download(const DownloadRequest& r);

// Locks `<destination>.lock` of every request, in name order so that two processes never wait on
// each other: another cvm fetching the same file waits here, then finds it in the cache. Fails
// (InstallError) when a lock cannot be taken.
std::vector<std::unique_ptr<platform::FileLock>>
lock_download_destinations(const std::vector<DownloadRequest>& requests);

} // namespace cvm::install
