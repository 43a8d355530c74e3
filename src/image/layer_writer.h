#pragma once
// Writes a layer (layer_plan.h) as a gzip-compressed tar (pax) blob in one pass: the tar stream
// is hashed (the config's diff_id) as libarchive makes it, compressed (gzip_stream.h) and the
// compressed bytes hashed (the manifest's digest) as they reach the file. Every entry is owned by
// uid/gid 0 with no user or group names, and has the same time; nothing of the machine or the
// moment of writing (umask, locale, time, file order on disk) reaches the bytes.
// libarchive writes the tar to a callback, unfiltered: its own gzip filter can leave the time out
// of its header (the "gzip:timestamp" option unset), but it would hide the tar stream, whose
// digest the config needs, and compress on one thread; zlib (gzip_stream.h) does both.
#include <cstdint>
#include <ctime>
#include <functional>
#include <string>

#include "image/blob_file.h"
#include "image/layer_plan.h"

namespace cvm::image {

struct WrittenLayer {
    std::string digest;         // "sha256:..." of the compressed blob
    std::string diff_id;        // "sha256:..." of the tar stream
    std::uint64_t size = 0;     // compressed
    std::uint64_t tar_size = 0; // uncompressed
};

// `progress` is called with the file bytes written so far. `threads` as for GzipStream. Throws
// std::filesystem::filesystem_error for a source that cannot be read (or changed while it was
// read) and whatever `out` throws.
WrittenLayer write_layer(const LayerPlan& plan, std::time_t mtime, BlobFile& out, unsigned threads,
                         const std::function<void(std::uint64_t)>& progress);

} // namespace cvm::image
