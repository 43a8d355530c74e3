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
#include "install/error.h"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace cvm::install {

enum class ArchiveFormat { Unknown, TarXz, TarGz, TarBz2, TarZstd, Tar, Zip };

// Recognises the container from the first bytes of the file (not the name).
ArchiveFormat detect_archive_format(const std::filesystem::path& archive);
const char* archive_format_name(ArchiveFormat format);

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

struct ExtractedEntry {
    enum class Type { File, Directory, Symlink, Hardlink };
    std::string path; // relative, '/'-separated, normalised
    Type type = Type::File;
    std::string link_target; // symlinks and hard links
    std::uint64_t size = 0;  // files and hard links: the bytes written
    std::string sha256;      // files and hard links: of the bytes as they were written
    std::uint32_t crc32 = 0; // files, from extract_archive_stream of a zip only
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

// The mode an extracted file or folder gets from the archive's `perm`: masked like any file the
// user creates, never group- or world-writable, with what its owner needs to read and clean up.
unsigned extracted_mode(unsigned perm, bool directory);

// Each symlink among `entries`, followed on disk below `root` (through the others too), must end
// inside `root`; throws InstallError (input) naming the archive (`name`) and the entry.
void verify_symlinks(const std::filesystem::path& root, const std::vector<ExtractedEntry>& entries,
                     const std::string& name);

// An archive stored inside another file (an installer's payload behind its script or stub).
struct EmbeddedArchive {
    enum class Format { CompressedTar, SevenZip };
    Format format = Format::CompressedTar;
    std::uint64_t offset = 0; // where the archive starts in the file
    std::uint64_t length = 0; // its bytes from there
};

// Extracts the archive `slice` of `file` into `destination` (an existing empty folder), with
// the checks extract_archive makes. Throws InstallError as extract_archive does.
ExtractResult extract_embedded_archive(const std::filesystem::path& file,
                                       const EmbeddedArchive& slice,
                                       const std::filesystem::path& destination,
                                       const ExtractOptions& options = {});

// Archive bytes that arrive in order (a download in progress). read() blocks until some are
// there, returns 0 at the end, and throws InstallError when the rest will not come.
class ArchiveSource {
public:
    virtual ~ArchiveSource() = default;
    virtual std::size_t read(void* buffer, std::size_t size) = 0;
    virtual std::uint64_t expected_size() const = 0; // 0 when unknown
};

// Extracts an archive while its bytes arrive (stream_extract.h feeds it from a download), with
// every check extract_archive makes. The format is recognised from the first bytes; `name` is the
// archive's name in messages. A zip is read through its local headers (libarchive's streaming
// reader), and each file's CRC-32 is recorded for a comparison with the central directory
// (zip_streamed.h), which only the complete file holds.
// What extract_archive_stream throws when the first bytes are no archive it reads, or the archive
// ends holding nothing: the complete file would say the same, so nobody waits for it.
class NotAnArchive : public InstallError {
public:
    explicit NotAnArchive(const std::string& message) : InstallError(Kind::Input, message) {}
};

ExtractResult extract_archive_stream(ArchiveSource& source, const std::string& name,
                                     const std::filesystem::path& destination,
                                     const ExtractOptions& options = {});

// The container recognised from an archive's first bytes (up to 512).
ArchiveFormat detect_archive_format(const unsigned char* head, std::size_t size);

// Entry-path rules, exposed for tests and fuzzing: returns the normalised relative path
// ('/'-separated, no "." components) or an empty string with `why` set when refused.
// An entry naming the root itself ("./") yields "." .
std::string normalize_entry_path(const std::string& raw, std::string* why);

// Where a symlink at `link_path` (normalised, relative) pointing to `target` ends up,
// resolved lexically from the link's folder; empty with `why` set when it leaves the root
// or is absolute.
std::string resolve_link_target(const std::string& link_path, const std::string& target,
                                std::string* why);

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
