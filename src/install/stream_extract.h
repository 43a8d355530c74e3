#pragma once
// Archives extracted while they download. Each archive's bytes go to its part file in the
// download cache as always (download.h: size and SHA-256 verified, resume, limits, .part removed
// on failure and on signals), and a worker thread extracts them from that file as they arrive
// (download_tap.h) into the job's folder, with every check of extract.h. Nothing extracted is
// used unless the download was verified: the results are returned only then, and a download
// that fails or mismatches fails the whole call (the caller discards its staging folder).
//
// A zip read through its local headers is settled against its central directory once the file
// is complete (zip_streamed.h: symlinks and modes from it, entries whose data the streaming
// reader missed extracted again alone); a part file begun again (the server could not resume
// it) or a stream the streaming readers cannot follow is extracted again from the complete file.
// Several archives download and extract at once: downloads `DownloadOptions::parallel` at a
// time, extractions `parallel` at a time, in the order of the jobs. When one archive cannot be
// extracted (its own download verified), the other downloads are stopped at once. On Windows the
// reader shares the growing file through platform/shared_file.h.
#include "install/download.h"
#include "install/extract.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace cvm::install {

struct StreamJob {
    DownloadRequest request;          // the download; an empty url: `local` is the archive
    std::filesystem::path local;      // an archive already on disk (verified by the caller)
    std::filesystem::path destination; // an existing empty folder
    // Bytes of this archive extracted so far, and its size (see ExtractOptions::progress).
    std::function<void(std::uint64_t done, std::uint64_t total)> progress;
};

struct StreamResult {
    ExtractResult extracted;
    std::filesystem::path archive; // the complete archive (the cache file, or `local`)
    std::string sha256;            // the archive's, when it was downloaded (else empty)
};

// Runs every job; results in the jobs' order. Throws InstallError: the download's failure when
// a download failed (also when its extraction stopped first), else the first extraction's.
std::vector<StreamResult> download_and_extract(const std::vector<StreamJob>& jobs,
                                               const DownloadOptions& download,
                                               unsigned parallel = 0);

} // namespace cvm::install
