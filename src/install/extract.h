#pragma once
// Safe, fast extraction of .tar.xz, .tgz, .tar and .zip/.whl archives into a staging folder.
//
// Every entry is checked before anything is written: no absolute paths, no "..", no entry
// written through a symlink, symlinks and hard links must point inside the destination,
// no device files, fifos or sockets, no entry listed twice. libarchive's
// ARCHIVE_EXTRACT_SECURE_* flags are set as well, and after extraction every symlink is
// resolved on disk to prove it stays inside. On any refusal the extraction stops with an
// InstallError; the caller removes the staging folder. Any failed write is fatal and names the
// system's reason. Modes are masked with the umask and with 022 (nothing lands group- or
// world-writable). Each file's size and SHA-256 are computed from the bytes as they are written.
//
// Speed: .xz is decoded by liblzma on its own thread (several threads for multi-block
// files, as `xz -T2` writes them) while libarchive writes files; zip entries are written
// by several threads at once.
#include "install/archive_types.h"
#include "install/entry_rules.h"
#include "install/error.h"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace cvm::install {

// Recognises the container from the first bytes of the file (not the name).
ArchiveFormat detect_archive_format(const std::filesystem::path& archive);

struct ExtractOptions {
    // Worker threads: for multi-block xz decoding and for zip entries. 0 means one per core.
    unsigned threads = 0;
    // Called now and then from the extracting thread(s) with the bytes of the archive file
    // consumed so far and the file's size. Must be thread-safe.
    std::function<void(std::uint64_t done, std::uint64_t total)> progress;
    // When set, only entries whose normalised path it accepts are written; the others are
    // skipped unwritten (an installer's driver and samples). A path that breaks the entry rules
    // is refused whether selected or not.
    std::function<bool(const std::string& path)> select;
};

struct ExtractResult {
    ArchiveFormat format = ArchiveFormat::Unknown;
    std::vector<ExtractedEntry> entries;
    std::uint64_t bytes_written = 0;
};

// Extracts `archive` into `destination`, an existing empty folder. Throws InstallError:
// input for a refused or corrupt archive (naming the archive and the entry), operation for
// failures to write (disk full, permissions).
ExtractResult extract_archive(const std::filesystem::path& archive,
                              const std::filesystem::path& destination,
                              const ExtractOptions& options = {});

// Extracts the archive `slice` of `file` into `destination` (an existing empty folder), with
// the checks extract_archive makes. Throws InstallError as extract_archive does.
ExtractResult extract_embedded_archive(const std::filesystem::path& file,
                                       const EmbeddedArchive& slice,
                                       const std::filesystem::path& destination,
                                       const ExtractOptions& options = {});

// Extracts an archive while its bytes arrive (stream_extract.h feeds it from a download), with
// every check extract_archive makes. The format is recognised from the first bytes; `name` is the
// archive's name in messages. A zip is read through its local headers (libarchive's streaming
// reader), and each file's CRC-32 is recorded for a comparison with the central directory
// (zip_streamed.h), which only the complete file holds. Throws NotAnArchive (archive_types.h)
// when the first bytes are no archive it reads.
ExtractResult extract_archive_stream(ArchiveSource& source, const std::string& name,
                                     const std::filesystem::path& destination,
                                     const ExtractOptions& options = {});

// The container recognised from an archive's first bytes (up to 512).
ArchiveFormat detect_archive_format(const unsigned char* head, std::size_t size);

struct ArchiveJob {
    std::filesystem::path archive;
    std::filesystem::path destination;
    // This job's progress (bytes of its archive); overrides ExtractOptions::progress.
    std::function<void(std::uint64_t done, std::uint64_t total)> progress;
};

// Extracts several archives at once (a toolkit's components), `parallel` at a time
// (0 = one per core). Rethrows the first failure after all running jobs stopped.
std::vector<ExtractResult> extract_archives(const std::vector<ArchiveJob>& jobs,
                                            unsigned parallel = 0,
                                            const ExtractOptions& options = {});

} // namespace cvm::install
