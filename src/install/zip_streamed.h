#pragma once
// A zip extracted through its local headers while it arrived (stream_extract.h), settled against
// its central directory once the file is complete, in place, without a second extraction.
//
// The two must agree on every name and type: a zip whose local headers say something else than
// its central directory (what other tools read) is refused. What local headers cannot tell comes
// from the central directory: which entries are symlinks (they arrived as files holding their
// targets, and become links with the checks extract.h makes for links) and the modes. A file
// whose size or CRC-32 differs from the central directory's (libarchive's streaming reader may
// deliver no data for some entries) is extracted again, alone, through the central directory,
// whose sizes and CRC-32s it must then have.
#include "install/extract.h"

#include <cstddef>
#include <filesystem>
#include <string>

namespace cvm::install {

// Settles what extract_archive_stream wrote below `root` from `zip` (complete now); `streamed`
// is its result, updated for the links and for the entries read again. Returns how many entries
// were read again. Scratch space: a folder beside `root`, removed afterwards. Throws
// InstallError: input naming the archive and the first entry whose name or type disagrees, that
// only one of them lists, a link that leaves the folder or an entry written through a link;
// operation for failures to write.
std::size_t settle_streamed_zip(const std::filesystem::path& zip,
                                const std::filesystem::path& root, ExtractResult& streamed,
                                const std::string& name, const ExtractOptions& options = {});

} // namespace cvm::install
