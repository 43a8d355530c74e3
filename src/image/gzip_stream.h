#pragma once
// A gzip stream whose bytes depend only on its input: no time, name or system in the header
// (mtime 0, OS 255 "unknown", no extra flags), one fixed compression level, and the input cut
// into fixed blocks compressed on several threads as pigz does (each block primed with the last
// 32 KiB of the one before and ended on a byte boundary), so one thread or sixteen give the same
// bytes. Any gzip reader (zlib, Go's compress/gzip, gunzip) reads it as one member.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace cvm::image {

class GzipStream {
public:
    // Receives the compressed bytes in order, on the thread that calls write() or finish().
    using Sink = std::function<void(const unsigned char* data, std::size_t size)>;
    static constexpr int kLevel = 6;                            // zlib's default, as docker's gzip
    static constexpr std::size_t kBlock = std::size_t(1) << 20; // uncompressed bytes per block

    // `threads` compressing blocks besides the caller; 0 compresses on the caller's thread.
    GzipStream(Sink sink, unsigned threads);
    ~GzipStream();
    GzipStream(const GzipStream&) = delete;
    GzipStream& operator=(const GzipStream&) = delete;

    void write(const void* data, std::size_t size);
    // Compresses what is left and writes the trailer (CRC-32 and size). Call once.
    void finish();

    std::uint64_t bytes_in() const { return total_in_; }

    // Threads worth starting on this machine (its processors, at most 16; 0 on one processor).
    static unsigned default_threads();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::uint64_t total_in_ = 0;
};

} // namespace cvm::image
