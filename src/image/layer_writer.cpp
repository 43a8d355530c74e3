#include "image/layer_writer.h"

#include <archive.h>
#include <archive_entry.h>
#include <cerrno>
#include <exception>
#include <fcntl.h>
#include <memory>
#include <system_error>
#include <unistd.h>
#include <vector>

#include "image/gzip_stream.h"
#include "install/error.h"
#include "install/sha256.h"
#include "platform/cleanup_on_signal.h"

namespace cvm::image {

namespace {

struct Sink {
    install::Sha256 tar_hash;
    std::uint64_t tar_size = 0;
    GzipStream* gzip = nullptr;
    std::exception_ptr error;
};

la_ssize_t write_callback(struct archive*, void* data, const void* buffer, size_t length) {
    auto* s = static_cast<Sink*>(data);
    try {
        s->tar_hash.update(buffer, length);
        s->tar_size += length;
        s->gzip->write(buffer, length);
        return static_cast<la_ssize_t>(length);
    } catch (...) {
        s->error = std::current_exception();
        return -1;
    }
}

[[noreturn]] void read_failed(const fs::path& p, int error) {
    throw fs::filesystem_error("cannot read", p, std::error_code(error, std::generic_category()));
}

[[noreturn]] void changed(const fs::path& p) {
    install::fail_operation(p.u8string() + " changed while it was exported; run the export again");
}

std::string archive_text(struct archive* a) {
    const char* text = archive_error_string(a);
    return text ? text : "unknown error";
}

struct ArchiveDeleter {
    void operator()(struct archive* a) const { archive_write_free(a); }
};
struct EntryDeleter {
    void operator()(archive_entry* e) const { archive_entry_free(e); }
};

} // namespace

WrittenLayer write_layer(const LayerPlan& plan, std::time_t mtime, BlobFile& out, unsigned threads,
                         const std::function<void(std::uint64_t)>& progress) {
    GzipStream gzip([&](const unsigned char* d, std::size_t n) { out.write(d, n); }, threads);
    Sink sink;
    sink.gzip = &gzip;
    std::unique_ptr<struct archive, ArchiveDeleter> a(archive_write_new());
    // pax where ustar cannot say it (long names and links, large files, names that are not
    // ASCII: cvm never sets a locale, so libarchive cannot translate those to UTF-8 and marks
    // them hdrcharset=BINARY, the bytes as they are, with ARCHIVE_WARN; see write_header below).
    // The option hdrcharset=BINARY is not set: it would put a pax header, which GNU tar warns
    // about, on every entry, and change every layer's digest.
    if (archive_write_set_format_pax_restricted(a.get()) != ARCHIVE_OK ||
        archive_write_open2(a.get(), &sink, nullptr, write_callback, nullptr, nullptr) !=
            ARCHIVE_OK)
        install::fail_operation("cannot start the layer: " + archive_text(a.get()));
    auto check = [&](int rc) {
        if (rc == ARCHIVE_OK) return;
        if (sink.error) std::rethrow_exception(sink.error);
        install::fail_operation("cannot write the layer: " + archive_text(a.get()));
    };
    // A header written with a name libarchive could not translate (notes-\xe9.txt): the
    // entry is whole, the name in its bytes under hdrcharset=BINARY; names travel as their bytes.
    auto write_header = [&](archive_entry* entry) {
        int rc = archive_write_header(a.get(), entry);
        check(rc == ARCHIVE_WARN && !sink.error ? ARCHIVE_OK : rc);
    };
    std::unique_ptr<archive_entry, EntryDeleter> e(archive_entry_new());
    std::vector<char> buffer(std::size_t(1) << 20);
    std::uint64_t done = 0;
    for (const auto& item : plan.entries) {
        archive_entry_clear(e.get());
        archive_entry_copy_pathname(e.get(), item.path.c_str());
        archive_entry_set_uid(e.get(), 0);
        archive_entry_set_gid(e.get(), 0);
        archive_entry_set_mtime(e.get(), mtime, 0);
        archive_entry_set_perm(e.get(), item.mode);
        switch (item.type) {
        case LayerEntry::Type::Directory:
            archive_entry_set_filetype(e.get(), AE_IFDIR);
            break;
        case LayerEntry::Type::Symlink:
            archive_entry_set_filetype(e.get(), AE_IFLNK);
            archive_entry_copy_symlink(e.get(), item.target.c_str());
            break;
        case LayerEntry::Type::Hardlink:
            archive_entry_set_filetype(e.get(), AE_IFREG);
            archive_entry_copy_hardlink(e.get(), item.target.c_str());
            archive_entry_set_size(e.get(), 0);
            break;
        case LayerEntry::Type::File:
            archive_entry_set_filetype(e.get(), AE_IFREG);
            archive_entry_set_size(e.get(), static_cast<la_int64_t>(item.size));
            break;
        }
        if (item.type != LayerEntry::Type::File) {
            write_header(e.get());
            continue;
        }
        int fd = ::open(item.source.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) read_failed(item.source, errno);
        struct Close {
            int fd;
            ~Close() { ::close(fd); }
        } close_it{fd};
        write_header(e.get());
        std::uint64_t left = item.size;
        for (;;) {
            if (platform::interrupted())
                install::fail_operation("interrupted; nothing was exported");
            ssize_t n = ::read(fd, buffer.data(), buffer.size());
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) read_failed(item.source, errno);
            if (n == 0) break;
            if (static_cast<std::uint64_t>(n) > left) changed(item.source);
            la_ssize_t w = archive_write_data(a.get(), buffer.data(), static_cast<size_t>(n));
            if (w != n) check(ARCHIVE_FATAL);
            left -= static_cast<std::uint64_t>(n);
            done += static_cast<std::uint64_t>(n);
            if (progress) progress(done);
        }
        // A file that shrank or grew since the plan was made would make a layer that is not
        // what the plan says.
        if (left != 0) changed(item.source);
    }
    check(archive_write_close(a.get()));
    gzip.finish();
    WrittenLayer w;
    w.diff_id = "sha256:" + sink.tar_hash.hex_digest();
    w.tar_size = sink.tar_size;
    w.digest = out.close();
    w.size = out.size();
    return w;
}

} // namespace cvm::image
