#pragma once
// The types extraction shares with its parts (entry_guard, archive_sources) and its callers: the
// formats, an entry as written, an archive inside another file, bytes that arrive in order, and
// the refusal of something that is no archive. Below extract.h, so its parts need not include it.
#include "install/error.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace cvm::install {

enum class ArchiveFormat { Unknown, TarXz, TarGz, TarBz2, TarZstd, Tar, Zip };

struct ExtractedEntry {
    enum class Type { File, Directory, Symlink, Hardlink };
    std::string path; // relative, '/'-separated, normalised
    Type type = Type::File;
    std::string link_target; // symlinks and hard links
    std::uint64_t size = 0;  // files and hard links: the bytes written
    std::string sha256;      // files and hard links: of the bytes as they were written
    std::uint32_t crc32 = 0; // files, from extract_archive_stream of a zip only
};

// An archive stored inside another file (an installer's payload behind its script or stub).
struct EmbeddedArchive {
    enum class Format { CompressedTar, SevenZip };
    Format format = Format::CompressedTar;
    std::uint64_t offset = 0; // where the archive starts in the file
    std::uint64_t length = 0; // its bytes from there
};

// Archive bytes that arrive in order (a download in progress). read() blocks until some are
// there, returns 0 at the end, and throws InstallError when the rest will not come.
class ArchiveSource {
public:
    virtual ~ArchiveSource() = default;
    virtual std::size_t read(void* buffer, std::size_t size) = 0;
    virtual std::uint64_t expected_size() const = 0; // 0 when unknown
};

// What extract_archive_stream throws when the first bytes are no archive it reads, or the archive
// ends holding nothing: the complete file would say the same, so nobody waits for it.
class NotAnArchive : public InstallError {
public:
    explicit NotAnArchive(const std::string& message) : InstallError(Kind::Input, message) {}
};

} // namespace cvm::install
