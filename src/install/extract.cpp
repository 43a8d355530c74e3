// Extraction (extract.h): one reader and one writer for tar streams, several for a zip, the
// entry points for a file, a slice of one, bytes that arrive, and several archives at once. The
// pieces it stands on: archive_handles (libarchive), xz_source (the threaded xz decoder),
// entry_guard (the checks on each entry), disk_full (failed writes), archive_sources (byte
// sources), cpu_count (threads).
#include "install/extract.h"

#include "install/archive_handles.h"
#include "install/archive_sources.h"
#include "install/cpu_count.h"
#include "install/disk_full.h"
#include "install/entry_guard.h"
#include "install/error.h"
#include "install/sha256.h"
#include "install/xz_source.h"
#include "platform/cleanup_on_signal.h"
#include "platform/platform.h"

#include <archive.h>
#include <archive_entry.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <fstream>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

// Copies one entry's data from `r` to `w`, hashing the bytes as they are written; fills the
// entry's size and sha256. Gaps (sparse entries) and the tail up to the declared size are
// zeros on disk, and are hashed as such.
void copy_data(archive* r, archive* w, const fs::path& archive_path, const fs::path& root,
               ExtractedEntry& entry, const std::atomic<bool>* abort, bool with_crc = false) {
    uLong crc = crc32(0L, Z_NULL, 0);
    static const std::vector<char> zeros(1 << 16, 0);
    Sha256 hash;
    std::uint64_t position = 0;
    auto hash_zeros = [&](std::uint64_t n) {
        while (n > 0) {
            std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(n, zeros.size()));
            hash.update(zeros.data(), chunk);
            n -= chunk;
        }
    };
    for (;;) {
        const void* buffer = nullptr;
        std::size_t size = 0;
        la_int64_t offset = 0;
        int rc = archive_read_data_block(r, &buffer, &size, &offset);
        if (rc == ARCHIVE_EOF) break;
        // A warning while reading data is a damaged entry (zip reports a bad CRC this way).
        if (rc != ARCHIVE_OK)
            fail_input("archive " + display(archive_path) + " is damaged at \"" + entry.path +
                       "\": " + error_text(r) + "; download it again");
        if (abort != nullptr && abort->load(std::memory_order_relaxed)) fail_operation("stopped");
        if (platform::interrupted()) fail_operation("interrupted; nothing was installed");
        if (archive_write_data_block(w, buffer, size, offset) != ARCHIVE_OK)
            write_failed(w, archive_path, root, entry.path);
        std::uint64_t at = static_cast<std::uint64_t>(std::max<la_int64_t>(offset, 0));
        if (at < position)
            fail_input("archive " + display(archive_path) + " is damaged at \"" + entry.path +
                       "\": data blocks out of order; download it again");
        hash_zeros(at - position);
        hash.update(buffer, size);
        if (with_crc) {
            if (at != position)
                fail_input("archive " + display(archive_path) + " is damaged at \"" + entry.path +
                           "\": a gap in a zip entry; download it again");
            // (zlib answers 0 for a null buffer: the empty block that ends a stored entry.)
            if (size > 0) crc = crc32_z(crc, static_cast<const Bytef*>(buffer), size);
        }
        position = at + size;
    }
    if (position < entry.size) hash_zeros(entry.size - position);
    entry.size = std::max(entry.size, position);
    entry.sha256 = hash.hex_digest();
    if (with_crc) entry.crc32 = static_cast<std::uint32_t>(crc);
}

void finish_writer(archive* w, const fs::path& archive_path, const fs::path& root) {
    if (archive_write_close(w) != ARCHIVE_OK)
        write_failed(w, archive_path, root, "(folder permissions)");
}

// After extraction every symlink must resolve, on disk, inside the destination.
// Folders the archive does not list are made by libarchive with the umask alone: take group
// and world write from them too (listed ones got their masked mode from apply_plan).
void mask_implicit_folders(const fs::path& root, const std::vector<ExtractedEntry>& entries) {
    std::unordered_set<std::string> listed, implicit;
    for (const auto& e : entries)
        if (e.type == ExtractedEntry::Type::Directory) listed.insert(e.path);
    for (const auto& e : entries)
        for (auto slash = e.path.rfind('/'); slash != std::string::npos && slash > 0;
             slash = e.path.rfind('/', slash - 1)) {
            std::string parent = e.path.substr(0, slash);
            if (listed.count(parent) || !implicit.insert(parent).second) break;
        }
    for (const auto& folder : implicit) {
        std::error_code ec;
        fs::permissions(root / fs::u8path(folder), fs::perms::group_write | fs::perms::others_write,
                        fs::perm_options::remove | fs::perm_options::nofollow, ec);
    }
}

// A hard link is the file it names: it gets that file's record (or gives it its own, when the
// link entry carried the data).
void share_hardlink_records(std::vector<ExtractedEntry>& entries) {
    std::unordered_map<std::string, std::size_t> files;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        ExtractedEntry& e = entries[i];
        if (e.type == ExtractedEntry::Type::File) {
            files[e.path] = i;
        } else if (e.type == ExtractedEntry::Type::Hardlink) {
            auto it = files.find(e.link_target);
            if (it == files.end()) continue;
            ExtractedEntry& target = entries[it->second];
            if (e.size > 0) {
                target.size = e.size;
                target.sha256 = e.sha256;
            } else {
                e.size = target.size;
                e.sha256 = target.sha256;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// One reader, one writer: tar streams (decoded by XzSource or by libarchive's filters).
// `total`: the archive's size, for progress. A zip (read through its local headers) records
// each file's CRC-32.
ExtractResult extract_stream(archive* r, const fs::path& archive_path, const fs::path& root,
                             ArchiveFormat format, XzSource* xz, const ExtractOptions& options,
                             std::uint64_t total) {
    ExtractResult result;
    result.format = format;
    EntryGuard guard(archive_path, root);
    WriteHandle w;
    auto damaged = [&](const std::string& where) {
        std::string why = xz ? xz->error() : std::string();
        if (why.empty())
            why = "archive " + display(archive_path) + " is damaged" + where + ": " +
                  error_text(r) + "; download it again";
        fail_input(why);
    };
    for (;;) {
        archive_entry* e = nullptr;
        int rc = archive_read_next_header(r, &e);
        if (rc == ARCHIVE_EOF) break;
        if (rc < ARCHIVE_WARN)
            damaged(result.entries.empty() ? std::string()
                                           : " after \"" + result.entries.back().path + "\"");
        if (options.select) {
            const char* raw = archive_entry_pathname(e);
            std::string path = normalize_entry_path(raw != nullptr ? raw : "", nullptr);
            if (!path.empty() && path != "." && !options.select(path)) continue;
        }
        EntryGuard::Plan plan = guard.check(e);
        if (plan.skip) continue;
        apply_plan(e, plan);
        if (write_header(w.a, e) != ARCHIVE_OK)
            write_failed(w.a, archive_path, root, plan.entry.path);
        if (plan.entry.type == ExtractedEntry::Type::File ||
            plan.entry.type == ExtractedEntry::Type::Hardlink) {
            copy_data(r, w.a, archive_path, root, plan.entry, nullptr,
                      format == ArchiveFormat::Zip);
            result.bytes_written += plan.entry.size;
        }
        if (archive_write_finish_entry(w.a) != ARCHIVE_OK)
            write_failed(w.a, archive_path, root, plan.entry.path);
        result.entries.push_back(std::move(plan.entry));
        if (!xz && options.progress)
            options.progress(static_cast<std::uint64_t>(archive_filter_bytes(r, -1)), total);
    }
    finish_writer(w.a, archive_path, root);
    if (xz) xz->drain();
    share_hardlink_records(result.entries);
    mask_implicit_folders(root, result.entries);
    if (!xz && options.progress) options.progress(total, total);
    verify_symlinks(root, result.entries, display(archive_path));
    return result;
}

// Zip: a first pass reads the central directory and checks every entry; then several
// threads, each with its own reader and writer, claim entries and write them.
ExtractResult extract_zip(const fs::path& archive_path, const fs::path& root,
                          const ExtractOptions& options) {
    ExtractResult result;
    result.format = ArchiveFormat::Zip;
    std::vector<EntryGuard::Plan> plans;
    std::uint64_t total_bytes = 0;
    {
        ReadHandle r;
        archive_read_support_format_zip_seekable(r.a);
        if (open_filename(r.a, archive_path.c_str(), kReadBlock) != ARCHIVE_OK)
            fail_input("cannot open " + archive_path.string() + " as zip: " + error_text(r.a));
        EntryGuard guard(archive_path, root);
        for (;;) {
            archive_entry* e = nullptr;
            int rc = archive_read_next_header(r.a, &e);
            if (rc == ARCHIVE_EOF) break;
            if (rc < ARCHIVE_WARN)
                fail_input("archive " + display(archive_path) + " is damaged: " + error_text(r.a) +
                           "; download it again");
            plans.push_back(guard.check(e));
            EntryGuard::Plan& plan = plans.back();
            // Unselected entries were checked all the same, and are left unwritten.
            if (!plan.skip && options.select && !options.select(plan.entry.path)) plan.skip = true;
            if (!plan.skip) total_bytes += plan.entry.size;
        }
    }
    // The central directory tells the unpacked size: refuse before writing what cannot fit.
    {
        std::error_code ec;
        fs::space_info space = fs::space(root, ec);
        if (!ec && space.available < total_bytes)
            fail_operation("no space left on device: " + display(archive_path) + " unpacks to " +
                           megabytes(total_bytes) + ", " + megabytes(space.available) +
                           " are free in " + disk_folder(root).u8string() +
                           "; free space (or set CVM_ROOT to another disk) and run the install "
                           "again");
    }
    std::vector<std::atomic<bool>> claimed(plans.size());
    for (auto& c : claimed)
        c.store(false);
    std::atomic<bool> abort{false};
    std::atomic<std::uint64_t> written{0};
    std::uint64_t file_size = 0;
    {
        std::error_code ec;
        file_size = fs::file_size(archive_path, ec);
    }
    std::mutex error_mutex;
    std::exception_ptr first_error;
    auto work = [&] {
        try {
            ReadHandle r;
            archive_read_support_format_zip_seekable(r.a);
            if (open_filename(r.a, archive_path.c_str(), kReadBlock) != ARCHIVE_OK)
                fail_input("cannot open " + archive_path.string() + " as zip: " + error_text(r.a));
            WriteHandle w;
            for (std::size_t i = 0; !abort.load(); ++i) {
                archive_entry* e = nullptr;
                int rc = archive_read_next_header(r.a, &e);
                if (rc == ARCHIVE_EOF) break;
                if (rc < ARCHIVE_WARN)
                    fail_input("archive " + display(archive_path) +
                               " is damaged: " + error_text(r.a) + "; download it again");
                if (i >= plans.size())
                    fail_input("archive " + display(archive_path) + " changed while reading");
                EntryGuard::Plan& plan = plans[i];
                if (plan.skip || claimed[i].exchange(true)) continue;
                const char* name = archive_entry_pathname(e);
                if (name == nullptr || normalize_entry_path(name, nullptr) != plan.entry.path)
                    fail_input("archive " + display(archive_path) + " changed while reading");
                apply_plan(e, plan);
                if (write_header(w.a, e) != ARCHIVE_OK)
                    write_failed(w.a, archive_path, root, plan.entry.path);
                if (plan.entry.type == ExtractedEntry::Type::File) {
                    copy_data(r.a, w.a, archive_path, root, plan.entry, &abort);
                    std::uint64_t n = plan.entry.size;
                    std::uint64_t now = written.fetch_add(n) + n;
                    if (options.progress && total_bytes > 0)
                        options.progress(static_cast<std::uint64_t>(static_cast<double>(now) /
                                                                    total_bytes * file_size),
                                         file_size);
                }
                if (archive_write_finish_entry(w.a) != ARCHIVE_OK)
                    write_failed(w.a, archive_path, root, plan.entry.path);
            }
            finish_writer(w.a, archive_path, root);
        } catch (...) {
            std::lock_guard<std::mutex> lock(error_mutex);
            if (!first_error) first_error = std::current_exception();
            abort.store(true);
        }
    };
    unsigned threads =
        std::min<unsigned>(worker_count(options.threads),
                           static_cast<unsigned>(std::max<std::size_t>(plans.size(), 1)));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t)
        pool.emplace_back(work);
    work();
    for (auto& t : pool)
        t.join();
    if (first_error) std::rethrow_exception(first_error);
    for (auto& plan : plans)
        if (!plan.skip) result.entries.push_back(std::move(plan.entry));
    result.bytes_written = written.load();
    mask_implicit_folders(root, result.entries);
    if (options.progress) options.progress(file_size, file_size);
    verify_symlinks(root, result.entries, display(archive_path));
    return result;
}

} // namespace

ArchiveFormat detect_archive_format(const fs::path& archive) {
    std::ifstream in(archive, std::ios::binary);
    if (!in) fail_operation("cannot read " + archive.string() + ": " + std::strerror(errno));
    unsigned char head[512] = {};
    in.read(reinterpret_cast<char*>(head), sizeof head);
    return detect_archive_format(head, static_cast<std::size_t>(in.gcount()));
}

ArchiveFormat detect_archive_format(const unsigned char* head, std::size_t n) {
    auto starts = [&](const char* magic, std::size_t len) {
        return n >= len && std::memcmp(head, magic, len) == 0;
    };
    if (starts("\xFD"
               "7zXZ\0",
               6))
        return ArchiveFormat::TarXz;
    if (starts("\x1F\x8B", 2)) return ArchiveFormat::TarGz;
    if (starts("BZh", 3)) return ArchiveFormat::TarBz2;
    if (starts("\x28\xB5\x2F\xFD", 4)) return ArchiveFormat::TarZstd;
    if (starts("PK\x03\x04", 4) || starts("PK\x05\x06", 4)) return ArchiveFormat::Zip;
    if (n >= 262 && std::memcmp(head + 257, "ustar", 5) == 0) return ArchiveFormat::Tar;
    return ArchiveFormat::Unknown;
}

// The existing, empty folder an archive is extracted into, canonical (so libarchive's symlink
// checks see no link in the folder's own path).
static fs::path extraction_root(const fs::path& destination) {
    std::error_code ec;
    if (!fs::is_directory(destination, ec))
        fail_operation("extraction folder " + destination.string() + " does not exist");
    if (fs::directory_iterator(destination, ec) != fs::directory_iterator())
        fail_operation("extraction folder " + destination.string() + " is not empty");
    fs::path root = fs::canonical(destination, ec);
    if (ec) fail_operation("cannot resolve " + destination.string() + ": " + ec.message());
    return root;
}

ExtractResult extract_archive(const fs::path& archive_path, const fs::path& destination,
                              const ExtractOptions& options) {
    std::error_code ec;
    fs::path root = extraction_root(destination);
    if (!fs::is_regular_file(archive_path, ec))
        fail_input(archive_path.string() + " is not a file");
    ArchiveFormat format = detect_archive_format(archive_path);
    switch (format) {
    case ArchiveFormat::Unknown:
        fail_input(archive_path.string() +
                   " is not an archive cvm reads (.tar.xz, .tgz, .tar, .zip, .whl)");
    case ArchiveFormat::Zip:
        return extract_zip(archive_path, root, options);
    case ArchiveFormat::TarXz: {
        XzSource source(archive_path, worker_count(options.threads), options.progress);
        ReadHandle r;
        archive_read_support_format_tar(r.a);
        archive_read_support_format_gnutar(r.a);
        if (archive_read_open(r.a, &source, nullptr, &XzSource::read_callback, nullptr) !=
            ARCHIVE_OK) {
            std::string why = source.error();
            fail_input(why.empty() ? "archive " + display(archive_path) +
                                         " is not a tar inside xz: " + error_text(r.a)
                                   : why);
        }
        return extract_stream(r.a, archive_path, root, format, &source, options, 0);
    }
    default: {
        ReadHandle r;
        archive_read_support_filter_all(r.a);
        archive_read_support_format_tar(r.a);
        archive_read_support_format_gnutar(r.a);
        if (open_filename(r.a, archive_path.c_str(), kReadBlock) != ARCHIVE_OK)
            fail_input("archive " + display(archive_path) + " cannot be read: " + error_text(r.a));
        return extract_stream(r.a, archive_path, root, format, nullptr, options,
                              fs::file_size(archive_path, ec));
    }
    }
}

ExtractResult extract_embedded_archive(const fs::path& file, const EmbeddedArchive& slice,
                                       const fs::path& destination, const ExtractOptions& options) {
    fs::path root = extraction_root(destination);
    SliceSource source(file, slice);
    ReadHandle r;
    ArchiveFormat format = ArchiveFormat::Tar;
    if (slice.format == EmbeddedArchive::Format::SevenZip) {
        // 7-Zip keeps its index at the end: it must seek.
        archive_read_support_format_7zip(r.a);
        archive_read_set_seek_callback(r.a, &SliceSource::seek);
    } else {
        archive_read_support_filter_all(r.a);
        archive_read_support_format_tar(r.a);
        archive_read_support_format_gnutar(r.a);
    }
    if (source.open(r.a) != ARCHIVE_OK)
        fail_input(display(file) + ": its archive at offset " + std::to_string(slice.offset) +
                   " cannot be read (" + error_text(r.a) +
                   "); the file is damaged or truncated: "
                   "download it again");
    return extract_stream(r.a, file, root, format, nullptr, options, slice.length);
}

std::vector<ExtractResult> extract_archives(const std::vector<ArchiveJob>& jobs, unsigned parallel,
                                            const ExtractOptions& options) {
    std::vector<ExtractResult> results(jobs.size());
    // Largest archives first: the longest one starts at once and the others fill in around it.
    std::vector<std::size_t> order(jobs.size());
    std::vector<std::uintmax_t> sizes(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        order[i] = i;
        std::error_code ec;
        sizes[i] = fs::file_size(jobs[i].archive, ec);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return sizes[a] > sizes[b]; });
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex error_mutex;
    std::exception_ptr first_error;
    unsigned workers = std::min<unsigned>(
        worker_count(parallel), static_cast<unsigned>(std::max<std::size_t>(jobs.size(), 1)));
    ExtractOptions each = options;
    // Several archives already keep the cores busy; one decoding thread per archive.
    if (workers > 1 && each.threads == 0) each.threads = 1;
    auto work = [&] {
        for (;;) {
            std::size_t n = next.fetch_add(1);
            if (n >= jobs.size() || failed.load()) return;
            std::size_t i = order[n];
            try {
                ExtractOptions mine = each;
                if (jobs[i].progress) mine.progress = jobs[i].progress;
                results[i] = extract_archive(jobs[i].archive, jobs[i].destination, mine);
            } catch (...) {
                std::lock_guard<std::mutex> lock(error_mutex);
                if (!first_error) first_error = std::current_exception();
                failed.store(true);
            }
        }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < workers; ++t)
        pool.emplace_back(work);
    work();
    for (auto& t : pool)
        t.join();
    if (first_error) std::rethrow_exception(first_error);
    return results;
}

ExtractResult extract_archive_stream(ArchiveSource& source, const std::string& name,
                                     const fs::path& destination, const ExtractOptions& options) {
    fs::path root = extraction_root(destination);
    const fs::path archive_path = fs::u8path(name);
    PeekedSource peeked(source);
    ArchiveFormat format = detect_archive_format(peeked.head(), peeked.head_size());
    std::uint64_t total = source.expected_size();
    ReadHandle r;
    CallbackReader reader{&peeked};
    switch (format) {
    case ArchiveFormat::Unknown:
        throw NotAnArchive(name + " is not an archive cvm reads (.tar.xz, .tgz, .tar, .zip, .whl)");
    case ArchiveFormat::TarXz: {
        XzSource xz(
            archive_path, [&peeked](char* b, std::size_t n) { return peeked.read(b, n); }, total,
            worker_count(options.threads), options.progress);
        archive_read_support_format_tar(r.a);
        archive_read_support_format_gnutar(r.a);
        if (archive_read_open(r.a, &xz, nullptr, &XzSource::read_callback, nullptr) != ARCHIVE_OK) {
            std::string why = xz.error();
            fail_input(why.empty()
                           ? "archive " + name + " is not a tar inside xz: " + error_text(r.a)
                           : why);
        }
        return extract_stream(r.a, archive_path, root, format, &xz, options, total);
    }
    case ArchiveFormat::Zip:
        // Local headers in order; the central directory is compared by the caller afterwards.
        archive_read_support_format_zip_streamable(r.a);
        break;
    default:
        archive_read_support_filter_all(r.a);
        archive_read_support_format_tar(r.a);
        archive_read_support_format_gnutar(r.a);
    }
    if (archive_read_open(r.a, &reader, nullptr, &CallbackReader::read, nullptr) != ARCHIVE_OK)
        fail_input("archive " + name + " cannot be read: " + error_text(r.a));
    return extract_stream(r.a, archive_path, root, format, nullptr, options, total);
}

} // namespace cvm::install
