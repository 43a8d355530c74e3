// The byte sources libarchive reads an archive from besides a whole file (archive_sources.h).
#include "install/archive_sources.h"

#include "install/error.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>

namespace cvm::install {

namespace fs = std::filesystem;

SliceSource::SliceSource(const fs::path& file, const EmbeddedArchive& slice)
    : path_(file), base_(slice.offset), length_(slice.length), buffer_(kReadBlock) {
    in_.open(file, std::ios::binary);
    if (!in_) fail_operation("cannot read " + file.string() + ": " + std::strerror(errno));
}

int SliceSource::open(archive* a) {
    return archive_read_open2(a, this, nullptr, &SliceSource::read, &SliceSource::skip, nullptr);
}

la_ssize_t SliceSource::read(archive* a, void* self, const void** buffer) {
    auto* s = static_cast<SliceSource*>(self);
    std::uint64_t left = s->length_ - std::min(s->position_, s->length_);
    std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(left, s->buffer_.size()));
    *buffer = s->buffer_.data();
    if (want == 0) return 0;
    s->in_.clear();
    s->in_.seekg(static_cast<std::streamoff>(s->base_ + s->position_));
    s->in_.read(s->buffer_.data(), static_cast<std::streamsize>(want));
    auto got = static_cast<std::size_t>(std::max<std::streamsize>(s->in_.gcount(), 0));
    if (got == 0) {
        archive_set_error(a, EIO, "cannot read %s", s->path_.filename().string().c_str());
        return -1;
    }
    s->position_ += got;
    return static_cast<la_ssize_t>(got);
}

la_int64_t SliceSource::skip(archive*, void* self, la_int64_t request) {
    auto* s = static_cast<SliceSource*>(self);
    std::uint64_t left = s->length_ - std::min(s->position_, s->length_);
    std::uint64_t n =
        std::min<std::uint64_t>(static_cast<std::uint64_t>(std::max<la_int64_t>(request, 0)), left);
    s->position_ += n;
    return static_cast<la_int64_t>(n);
}

la_int64_t SliceSource::seek(archive*, void* self, la_int64_t offset, int whence) {
    auto* s = static_cast<SliceSource*>(self);
    la_int64_t from = whence == SEEK_SET   ? 0
                      : whence == SEEK_CUR ? static_cast<la_int64_t>(s->position_)
                                           : static_cast<la_int64_t>(s->length_);
    la_int64_t to = from + offset;
    if (to < 0) return ARCHIVE_FATAL;
    s->position_ = static_cast<std::uint64_t>(to);
    return to;
}

PeekedSource::PeekedSource(ArchiveSource& source) : source_(source) {
    while (head_.size() < 512) {
        char buffer[512];
        std::size_t got = source_.read(buffer, 512 - head_.size());
        if (got == 0) break;
        head_.append(buffer, got);
    }
}

std::size_t PeekedSource::read(void* buffer, std::size_t size) {
    if (served_ < head_.size()) {
        std::size_t n = std::min(size, head_.size() - served_);
        std::memcpy(buffer, head_.data() + served_, n);
        served_ += n;
        return n;
    }
    return source_.read(buffer, size);
}

la_ssize_t CallbackReader::read(archive* a, void* self, const void** out) {
    auto* me = static_cast<CallbackReader*>(self);
    try {
        *out = me->buffer.data();
        return static_cast<la_ssize_t>(me->source->read(me->buffer.data(), me->buffer.size()));
    } catch (const std::exception& e) {
        archive_set_error(a, EIO, "%s", e.what());
        return -1;
    }
}

} // namespace cvm::install
