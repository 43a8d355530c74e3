#include "install/extract.h"

#include "install/error.h"
#include "install/sha256.h"
#include "platform/cleanup_on_signal.h"
#include "platform/platform.h"

#include <archive.h>
#include <archive_entry.h>
#include <lzma.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kReadBlock = 1 << 20;  // bytes read from the archive file at once
constexpr std::size_t kXzInBlock = 4 << 20;  // compressed bytes handed to liblzma at once
constexpr std::size_t kXzOutBlock = 1 << 20; // decoded bytes handed to libarchive at once
constexpr std::size_t kXzQueueDepth = 8;     // decoded blocks in flight

// CPUs this process may run on. std::thread::hardware_concurrency() ignores the affinity mask
// (taskset, container cpusets), and more decoders than CPUs only slows the longest archive down.
// Linux tells the mask in /proc/self/status; elsewhere the file is absent and the hardware count
// stands. (A platform::available_cpus() would be the better home for this.)
unsigned available_cpus() {
    static const unsigned count = [] {
        unsigned n = std::thread::hardware_concurrency();
        std::ifstream status("/proc/self/status");
        std::string line;
        while (std::getline(status, line)) {
            if (line.rfind("Cpus_allowed_list:", 0) != 0) continue;
            unsigned allowed = 0;
            std::stringstream ranges(line.substr(18));
            std::string range;
            while (std::getline(ranges, range, ',')) {
                unsigned a = 0, b = 0;
                if (std::sscanf(range.c_str(), "%u-%u", &a, &b) == 2 && b >= a)
                    allowed += b - a + 1;
                else if (std::sscanf(range.c_str(), "%u", &a) == 1)
                    allowed += 1;
            }
            if (allowed > 0 && (n == 0 || allowed < n)) n = allowed;
        }
        return n == 0 ? 2u : n;
    }();
    return count;
}

unsigned worker_count(unsigned requested) {
    return requested != 0 ? requested : available_cpus();
}

std::string display(const fs::path& p) {
    return p.filename().string();
}

// libarchive takes narrow paths on POSIX and wide ones on Windows; overloads pick the right call
// from fs::path::value_type without a platform test here.
[[maybe_unused]] void set_entry_path(archive_entry* e, const char* p) {
    archive_entry_copy_pathname(e, p);
}
[[maybe_unused]] void set_entry_path(archive_entry* e, const wchar_t* p) {
    archive_entry_copy_pathname_w(e, p);
}
[[maybe_unused]] void set_entry_hardlink(archive_entry* e, const char* p) {
    archive_entry_copy_hardlink(e, p);
}
[[maybe_unused]] void set_entry_hardlink(archive_entry* e, const wchar_t* p) {
    archive_entry_copy_hardlink_w(e, p);
}
[[maybe_unused]] int open_filename(archive* a, const char* p, std::size_t block) {
    return archive_read_open_filename(a, p, block);
}
[[maybe_unused]] int open_filename(archive* a, const wchar_t* p, std::size_t block) {
    return archive_read_open_filename_w(a, p, block);
}

std::string error_text(archive* a) {
    const char* s = archive_error_string(a);
    return s != nullptr ? s : "unknown error";
}

struct ReadHandle {
    archive* a = archive_read_new();
    ~ReadHandle() {
        if (a != nullptr) archive_read_free(a);
    }
};

// libarchive learns the umask by setting it to 0 and back, in archive_write_disk_new() and again
// in every archive_write_header(). Two threads doing that at once can leave the process at
// umask 0 for good (the second saves the first's 0 and restores it), after which every file cvm
// writes is world-writable; and a file another thread creates inside the window is too. So
// these calls take turns, and cvm's own umask is read under the same lock before the first.
std::mutex umask_users;

archive* new_write_disk() {
    std::lock_guard<std::mutex> lock(umask_users);
    (void)platform::file_creation_mask();
    return archive_write_disk_new();
}

int write_header(archive* w, archive_entry* e) {
    std::lock_guard<std::mutex> lock(umask_users);
    return archive_write_header(w, e);
}

struct WriteHandle {
    archive* a = new_write_disk();
    WriteHandle() {
        // Our own checks come first (prepare_entry); these are the second line. Paths handed
        // to libarchive are absolute inside the canonical destination, so NOABSOLUTEPATHS
        // is left off on purpose.
        archive_write_disk_set_options(a, ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME |
                                              ARCHIVE_EXTRACT_SECURE_SYMLINKS |
                                              ARCHIVE_EXTRACT_SECURE_NODOTDOT);
    }
    ~WriteHandle() {
        if (a != nullptr) archive_write_free(a);
    }
};

// ---------------------------------------------------------------------------------------------
// liblzma on its own thread(s), feeding libarchive decoded tar bytes through a bounded queue.
class XzSource {
public:
    // Reads compressed bytes into a buffer: how many, 0 at the end; throws when it cannot.
    using Reader = std::function<std::size_t(char*, std::size_t)>;

    XzSource(const fs::path& file, unsigned threads,
             std::function<void(std::uint64_t, std::uint64_t)> progress)
        : XzSource(file, file_reader(file), 0, threads, std::move(progress)) {}
    XzSource(const fs::path& file, Reader read, std::uint64_t total, unsigned threads,
             std::function<void(std::uint64_t, std::uint64_t)> progress)
        : path_(file), threads_(threads), progress_(std::move(progress)), read_(std::move(read)) {
        std::error_code ec;
        total_ = total != 0 ? total : fs::file_size(file, ec);
        if (ec) total_ = 0;
        for (std::size_t i = 0; i < kXzQueueDepth + 2; ++i)
            free_.push_back(std::make_unique<Block>());
        worker_ = std::thread([this] { decode(); });
    }
    ~XzSource() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            cancelled_ = true;
        }
        changed_.notify_all();
        if (worker_.joinable()) worker_.join();
    }

    static la_ssize_t read_callback(archive* a, void* self, const void** buffer) {
        return static_cast<XzSource*>(self)->next(a, buffer);
    }

    // Decodes what libarchive left unread (the tar trailer) so the whole file's checks are
    // verified; throws on a damaged or truncated stream.
    void drain() {
        const void* buffer = nullptr;
        while (next(nullptr, &buffer) > 0) {
        }
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_.empty()) fail_input(error_);
    }

    std::string error() {
        std::lock_guard<std::mutex> lock(mutex_);
        return error_;
    }

private:
    static Reader file_reader(const fs::path& file) {
        auto in = std::make_shared<std::ifstream>(file, std::ios::binary);
        if (!*in) fail_operation("cannot read " + file.string() + ": " + std::strerror(errno));
        return [in, file](char* buffer, std::size_t size) {
            in->read(buffer, static_cast<std::streamsize>(size));
            if (in->bad()) fail_operation("cannot read " + file.string() + ": I/O error");
            return static_cast<std::size_t>(std::max<std::streamsize>(in->gcount(), 0));
        };
    }

    struct Block {
        std::vector<std::uint8_t> data = std::vector<std::uint8_t>(kXzOutBlock);
        std::size_t size = 0;
    };

    la_ssize_t next(archive* a, const void** buffer) {
        std::unique_lock<std::mutex> lock(mutex_);
        if (current_) {
            free_.push_back(std::move(current_));
            changed_.notify_all();
        }
        changed_.wait(lock, [&] { return !ready_.empty() || finished_; });
        if (!ready_.empty()) {
            current_ = std::move(ready_.front());
            ready_.pop_front();
            changed_.notify_all();
            *buffer = current_->data.data();
            return static_cast<la_ssize_t>(current_->size);
        }
        if (!error_.empty()) {
            if (a != nullptr) archive_set_error(a, EINVAL, "%s", error_.c_str());
            return -1;
        }
        return 0;
    }

    void finish(const std::string& error) {
        std::lock_guard<std::mutex> lock(mutex_);
        finished_ = true;
        error_ = error;
        changed_.notify_all();
    }

    std::unique_ptr<Block> take_free() {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return !free_.empty() || cancelled_; });
        if (cancelled_) return nullptr;
        auto block = std::move(free_.back());
        free_.pop_back();
        block->size = 0;
        return block;
    }

    bool publish(std::unique_ptr<Block> block) {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return ready_.size() < kXzQueueDepth || cancelled_; });
        if (cancelled_) return false;
        ready_.push_back(std::move(block));
        changed_.notify_all();
        return true;
    }

    void decode() {
        lzma_stream stream = LZMA_STREAM_INIT;
        lzma_mt mt{};
        mt.flags = LZMA_CONCATENATED | LZMA_FAIL_FAST;
        mt.threads = std::max(1u, threads_);
        // Parallel decoding keeps whole blocks in memory; allow a quarter of RAM for it, and
        // never refuse a file for memory reasons (it then decodes on one thread).
        std::uint64_t physmem = lzma_physmem();
        mt.memlimit_threading = std::max<std::uint64_t>(physmem / 4, 256ULL << 20);
        mt.memlimit_stop = UINT64_MAX;
        if (lzma_stream_decoder_mt(&stream, &mt) != LZMA_OK) {
            finish(display(path_) + ": liblzma could not start a decoder");
            return;
        }
        std::vector<std::uint8_t> input(kXzInBlock);
        std::unique_ptr<Block> out = take_free();
        bool eof = false;
        std::uint64_t consumed = 0;
        std::string error;
        while (out) {
            if (stream.avail_in == 0 && !eof) {
                std::size_t got = 0;
                try {
                    got = read_(reinterpret_cast<char*>(input.data()), input.size());
                } catch (const std::exception& e) {
                    error = e.what();
                    break;
                }
                if (got == 0) eof = true;
                stream.next_in = input.data();
                stream.avail_in = got;
                consumed += stream.avail_in;
                if (progress_) progress_(consumed, total_);
            }
            stream.next_out = out->data.data() + out->size;
            stream.avail_out = out->data.size() - out->size;
            lzma_ret ret = lzma_code(&stream, eof && stream.avail_in == 0 ? LZMA_FINISH : LZMA_RUN);
            out->size = out->data.size() - stream.avail_out;
            if (ret == LZMA_STREAM_END) {
                if (out->size > 0) publish(std::move(out));
                out.reset();
                break;
            }
            if (ret != LZMA_OK) {
                switch (ret) {
                case LZMA_MEM_ERROR:
                    error = display(path_) + ": out of memory while decoding xz";
                    break;
                case LZMA_FORMAT_ERROR:
                    error = display(path_) + " is not an xz file";
                    break;
                case LZMA_BUF_ERROR:
                    error = display(path_) + " is truncated (the xz stream ends early); "
                                             "download it again";
                    break;
                default:
                    error = display(path_) + " is damaged (xz data error); download it again";
                }
                break;
            }
            if (out->size == out->data.size()) {
                if (!publish(std::move(out))) break;
                out = take_free();
            }
        }
        lzma_end(&stream);
        finish(error);
    }

    fs::path path_;
    unsigned threads_;
    std::function<void(std::uint64_t, std::uint64_t)> progress_;
    Reader read_;
    std::uint64_t total_ = 0;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<std::unique_ptr<Block>> ready_;
    std::vector<std::unique_ptr<Block>> free_;
    std::unique_ptr<Block> current_;
    bool finished_ = false;
    bool cancelled_ = false;
    std::string error_;
    std::thread worker_;
};

// ---------------------------------------------------------------------------------------------
// The checks every entry passes before it is written.
class EntryGuard {
public:
    EntryGuard(const fs::path& archive, const fs::path& root) : archive_(archive), root_(root) {}

    struct Plan {
        bool skip = false; // the root folder itself (in a zip: also an entry not selected)
        ExtractedEntry entry;
        fs::path target;   // absolute path to write
        fs::path hardlink; // absolute path of the hard link's target
        int perm = 0644;
    };

    Plan check(archive_entry* e) {
        Plan plan;
        const char* raw = archive_entry_pathname(e);
        std::string raw_path = raw != nullptr ? raw : "";
        std::string why;
        std::string path = normalize_entry_path(raw_path, &why);
        if (path.empty()) refuse(raw_path, why);
        if (path == ".") {
            plan.skip = true;
            return plan;
        }
        plan.entry.path = path;
        through_symlink(path, raw_path);

        const char* hardlink = archive_entry_hardlink(e);
        const char* symlink = archive_entry_symlink(e);
        mode_t type = archive_entry_filetype(e);
        int perm = static_cast<int>(archive_entry_perm(e)) & 0777;
        if (hardlink != nullptr) {
            std::string target = normalize_entry_path(hardlink, &why);
            if (target.empty() || target == ".")
                refuse(raw_path, "hard link to \"" + std::string(hardlink) +
                                     "\": " + (why.empty() ? "the folder itself" : why));
            through_symlink(target, raw_path);
            if (!files_.count(target))
                refuse(raw_path,
                       "hard link to \"" + target + "\", which is not a file listed before it");
            plan.entry.type = ExtractedEntry::Type::Hardlink;
            plan.entry.link_target = target;
            plan.hardlink = root_ / fs::u8path(target);
            perm |= 0600;
        } else if (type == AE_IFLNK || symlink != nullptr) {
            std::string target = symlink != nullptr ? symlink : "";
            if (target.empty()) refuse(raw_path, "symlink without a target");
            if (resolve_link_target(path, target, &why).empty())
                refuse(raw_path, "symlink to \"" + target + "\" " + why);
            plan.entry.type = ExtractedEntry::Type::Symlink;
            plan.entry.link_target = target;
            symlinks_.insert(path);
            perm = 0777;
        } else if (type == AE_IFDIR) {
            plan.entry.type = ExtractedEntry::Type::Directory;
            perm |= 0700; // so the store can always be cleaned up
            if (symlinks_.count(path) || files_.count(path))
                refuse(raw_path, "a folder where the archive already put a file or link");
            dirs_.insert(path);
        } else if (type == AE_IFREG) {
            plan.entry.type = ExtractedEntry::Type::File;
            plan.entry.size =
                static_cast<std::uint64_t>(std::max<la_int64_t>(archive_entry_size(e), 0));
            perm |= 0600;
        } else {
            refuse(raw_path, "device files, fifos and sockets are not installed");
        }
        if (plan.entry.type != ExtractedEntry::Type::Directory) {
            if (!seen_.insert(path).second || dirs_.count(path)) refuse(raw_path, "listed twice");
            if (plan.entry.type != ExtractedEntry::Type::Symlink) files_.insert(path);
        }
        if (plan.entry.type != ExtractedEntry::Type::Symlink)
            perm = static_cast<int>(extracted_mode(static_cast<unsigned>(perm),
                                                   plan.entry.type == ExtractedEntry::Type::Directory));
        plan.perm = perm;
        plan.target = root_ / fs::u8path(path);
        return plan;
    }

    const std::unordered_set<std::string>& symlinks() const { return symlinks_; }

private:
    [[noreturn]] void refuse(const std::string& entry, const std::string& why) const {
        fail_input("archive " + display(archive_) + " refused: entry \"" + entry + "\": " + why);
    }

    // No entry may be written through a symlink the archive created.
    void through_symlink(const std::string& path, const std::string& raw) const {
        for (std::size_t slash = path.find('/'); slash != std::string::npos;
             slash = path.find('/', slash + 1))
            if (symlinks_.count(path.substr(0, slash)))
                refuse(raw, "goes through the symlink \"" + path.substr(0, slash) + "\"");
    }

    fs::path archive_;
    fs::path root_;
    std::unordered_set<std::string> symlinks_, files_, dirs_, seen_;
};

void apply_plan(archive_entry* e, const EntryGuard::Plan& plan) {
    set_entry_path(e, plan.target.c_str());
    if (plan.entry.type == ExtractedEntry::Type::Hardlink)
        set_entry_hardlink(e, plan.hardlink.c_str());
    if (plan.entry.type != ExtractedEntry::Type::Symlink)
        archive_entry_set_perm(e, static_cast<mode_t>(plan.perm));
}

std::string megabytes(std::uint64_t bytes) {
    return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MB";
}

// The folder to name for the disk being written: the store (above its .staging folder) when
// extracting into one, else the destination.
fs::path disk_folder(const fs::path& root) {
    for (fs::path p = root; p.has_relative_path(); p = p.parent_path())
        if (p.filename() == ".staging") return p.parent_path();
    return root;
}

// What a full disk looks like in a message: how much is free where the install is written.
std::string space_note(const fs::path& root) {
    std::error_code ec;
    fs::space_info s = fs::space(root, ec);
    if (ec) return "";
    return " (" + megabytes(s.available) + " free in " + disk_folder(root).u8string() + ")";
}

// Anything but ARCHIVE_OK from a write call is fatal: libarchive reports a failed write(2)
// (ENOSPC, EIO) as ARCHIVE_WARN and would then extend the file to its declared size with zeros.
[[noreturn]] void write_failed(archive* w, const fs::path& archive_path, const fs::path& root,
                               const std::string& entry) {
    int err = archive_errno(w);
    bool full = err == ENOSPC;
#ifdef EDQUOT
    full = full || err == EDQUOT;
#endif
    if (full)
        fail_operation("cannot write \"" + entry + "\" from " + display(archive_path) + ": " +
                       std::strerror(err) + space_note(root) +
                       "; free space (or set CVM_ROOT to another disk) and run the install again");
    if (err > 0)
        fail_operation("cannot write \"" + entry + "\" from " + display(archive_path) + ": " +
                       std::strerror(err) + " (" + error_text(w) + ")");
    // libarchive's own checks refused the entry (errno 0): a link that escapes, too much data.
    fail_input("archive " + display(archive_path) + " refused: entry \"" + entry +
               "\": " + error_text(w));
}

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

const char* archive_format_name(ArchiveFormat format) {
    switch (format) {
    case ArchiveFormat::TarXz:
        return "tar.xz";
    case ArchiveFormat::TarGz:
        return "tar.gz";
    case ArchiveFormat::TarBz2:
        return "tar.bz2";
    case ArchiveFormat::TarZstd:
        return "tar.zst";
    case ArchiveFormat::Tar:
        return "tar";
    case ArchiveFormat::Zip:
        return "zip";
    case ArchiveFormat::Unknown:
        break;
    }
    return "unknown";
}

std::string normalize_entry_path(const std::string& raw, std::string* why) {
    auto refuse = [&](const char* reason) {
        if (why != nullptr) *why = reason;
        return std::string();
    };
    if (raw.empty()) return refuse("empty name");
    // Archives made on Windows may separate with backslashes: treat both as separators.
    std::string path = raw;
    std::replace(path.begin(), path.end(), '\\', '/');
    if (path.front() == '/') return refuse("absolute path");
    if (path.size() >= 2 && path[1] == ':' && std::isalpha(static_cast<unsigned char>(path[0])))
        return refuse("absolute path (drive letter)");
    std::string out;
    std::size_t start = 0;
    while (start <= path.size()) {
        std::size_t end = path.find('/', start);
        if (end == std::string::npos) end = path.size();
        std::string part = path.substr(start, end - start);
        start = end + 1;
        if (part.empty() || part == ".") continue;
        if (part == "..") return refuse("\"..\" leaves the install folder");
        for (unsigned char c : part)
            if (c < 0x20 || c == 0x7f) return refuse("control character in the name");
        if (part.find(':') != std::string::npos && platform::host_os() == platform::Os::Windows)
            return refuse("\":\" in a name (an alternate data stream on Windows)");
        if (!out.empty()) out += '/';
        out += part;
    }
    if (out.empty()) return ".";
    if (why != nullptr) why->clear();
    return out;
}

std::string resolve_link_target(const std::string& link_path, const std::string& target,
                                std::string* why) {
    auto refuse = [&](const char* reason) {
        if (why != nullptr) *why = reason;
        return std::string();
    };
    if (target.empty()) return refuse("is empty");
    std::string t = target;
    std::replace(t.begin(), t.end(), '\\', '/');
    if (t.front() == '/' ||
        (t.size() >= 2 && t[1] == ':' && std::isalpha(static_cast<unsigned char>(t[0]))))
        return refuse("is an absolute path");
    // Start from the link's folder.
    std::vector<std::string> parts;
    {
        std::size_t start = 0;
        std::string folder = link_path;
        auto slash = folder.rfind('/');
        folder = slash == std::string::npos ? std::string() : folder.substr(0, slash);
        while (start < folder.size()) {
            std::size_t end = folder.find('/', start);
            if (end == std::string::npos) end = folder.size();
            parts.push_back(folder.substr(start, end - start));
            start = end + 1;
        }
    }
    std::size_t start = 0;
    while (start <= t.size()) {
        std::size_t end = t.find('/', start);
        if (end == std::string::npos) end = t.size();
        std::string part = t.substr(start, end - start);
        start = end + 1;
        if (part.empty() || part == ".") continue;
        if (part == "..") {
            if (parts.empty()) return refuse("leaves the install folder");
            parts.pop_back();
            continue;
        }
        parts.push_back(part);
    }
    std::string out;
    for (const auto& p : parts)
        out += (out.empty() ? "" : "/") + p;
    if (why != nullptr) why->clear();
    return out.empty() ? "." : out;
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

unsigned extracted_mode(unsigned perm, bool directory) {
    const unsigned owner = directory ? 0700 : 0600;
    // No set-user-ID, set-group-ID or sticky bit: nothing in a toolkit needs one.
    return (perm & 0777 & ~static_cast<unsigned>(platform::file_creation_mask() | 022)) | owner;
}

void verify_symlinks(const fs::path& root, const std::vector<ExtractedEntry>& entries, const std::string& name) {
    for (const auto& entry : entries) {
        if (entry.type != ExtractedEntry::Type::Symlink) continue;
        std::error_code ec;
        fs::path resolved = fs::weakly_canonical(root / fs::u8path(entry.path), ec);
        auto [r, p] = std::mismatch(root.begin(), root.end(), resolved.begin(), resolved.end());
        if (ec || r != root.end())
            fail_input("archive " + name + " refused: entry \"" + entry.path + "\": symlink to \"" +
                       entry.link_target + "\" resolves outside the install folder");
    }
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

namespace {

// libarchive reads the slice through these callbacks: positions are relative to its start, so
// the archive's own offsets (7-Zip's header position) come out right.
class SliceSource {
public:
    SliceSource(const fs::path& file, const EmbeddedArchive& slice)
        : path_(file), base_(slice.offset), length_(slice.length), buffer_(kReadBlock) {
        in_.open(file, std::ios::binary);
        if (!in_) fail_operation("cannot read " + file.string() + ": " + std::strerror(errno));
    }
    int open(archive* a) {
        return archive_read_open2(a, this, nullptr, &SliceSource::read, &SliceSource::skip,
                                  nullptr);
    }
    static la_ssize_t read(archive* a, void* self, const void** buffer) {
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
    static la_int64_t skip(archive*, void* self, la_int64_t request) {
        auto* s = static_cast<SliceSource*>(self);
        std::uint64_t left = s->length_ - std::min(s->position_, s->length_);
        std::uint64_t n = std::min<std::uint64_t>(static_cast<std::uint64_t>(std::max<la_int64_t>(request, 0)), left);
        s->position_ += n;
        return static_cast<la_int64_t>(n);
    }
    static la_int64_t seek(archive*, void* self, la_int64_t offset, int whence) {
        auto* s = static_cast<SliceSource*>(self);
        la_int64_t from = whence == SEEK_SET   ? 0
                          : whence == SEEK_CUR ? static_cast<la_int64_t>(s->position_)
                                               : static_cast<la_int64_t>(s->length_);
        la_int64_t to = from + offset;
        if (to < 0) return ARCHIVE_FATAL;
        s->position_ = static_cast<std::uint64_t>(to);
        return to;
    }

private:
    fs::path path_;
    std::uint64_t base_;
    std::uint64_t length_;
    std::uint64_t position_ = 0;
    std::ifstream in_;
    std::vector<char> buffer_;
};

} // namespace

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
                   " cannot be read (" + error_text(r.a) + "); the file is damaged or truncated: "
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

namespace {

// The first bytes of a source, read ahead to recognise the format, then served again.
class PeekedSource : public ArchiveSource {
public:
    explicit PeekedSource(ArchiveSource& source) : source_(source) {
        while (head_.size() < 512) {
            char buffer[512];
            std::size_t got = source_.read(buffer, 512 - head_.size());
            if (got == 0) break;
            head_.append(buffer, got);
        }
    }
    const unsigned char* head() const {
        return reinterpret_cast<const unsigned char*>(head_.data());
    }
    std::size_t head_size() const { return head_.size(); }
    std::size_t read(void* buffer, std::size_t size) override {
        if (served_ < head_.size()) {
            std::size_t n = std::min(size, head_.size() - served_);
            std::memcpy(buffer, head_.data() + served_, n);
            served_ += n;
            return n;
        }
        return source_.read(buffer, size);
    }
    std::uint64_t expected_size() const override { return source_.expected_size(); }

private:
    ArchiveSource& source_;
    std::string head_;
    std::size_t served_ = 0;
};

// libarchive's read callback over a source; what the source throws becomes the archive's error.
struct CallbackReader {
    ArchiveSource* source;
    std::vector<char> buffer = std::vector<char>(kReadBlock);

    static la_ssize_t read(archive* a, void* self, const void** out) {
        auto* me = static_cast<CallbackReader*>(self);
        try {
            *out = me->buffer.data();
            return static_cast<la_ssize_t>(me->source->read(me->buffer.data(), me->buffer.size()));
        } catch (const std::exception& e) {
            archive_set_error(a, EIO, "%s", e.what());
            return -1;
        }
    }
};

} // namespace

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
            archive_path, [&peeked](char* b, std::size_t n) { return peeked.read(b, n); },
            total, worker_count(options.threads), options.progress);
        archive_read_support_format_tar(r.a);
        archive_read_support_format_gnutar(r.a);
        if (archive_read_open(r.a, &xz, nullptr, &XzSource::read_callback, nullptr) != ARCHIVE_OK) {
            std::string why = xz.error();
            fail_input(why.empty() ? "archive " + name + " is not a tar inside xz: " + error_text(r.a)
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
