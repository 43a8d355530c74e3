#include "image/layout_writer.h"

#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

#include "config/trust.h"
#include "image/blob_file.h"
#include "install/error.h"

namespace cvm::image {

namespace {

std::string pid_text() {
    return std::to_string(platform::process_id());
}

std::string dumped(const nlohmann::json& doc) {
    return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}


// One folder of a destination, from its lstat (or fstat of an open folder): a folder that is no
// link and is trusted, or a refusal naming it.
void check_folder_stat(const fs::path& dir, const fs::path& folder, const struct stat& st) {
    if (S_ISLNK(st.st_mode))
        install::fail_input("refusing to write the image layout " + dir.u8string() + ": " +
                            folder.u8string() +
                            " is a link, and cvm writes a layout only into its own folders; "
                            "replace the link with a folder, or name another folder");
    if (!S_ISDIR(st.st_mode))
        install::fail_input("refusing to write the image layout " + dir.u8string() + ": " +
                            folder.u8string() +
                            " is not a folder; remove it, or name another folder");
    platform::FileMeta meta = platform::meta_of_stat(st);
    Doubt doubt = doubt_of(meta);
    if (doubt != Doubt::None)
        install::fail_input("refusing to write the image layout " + dir.u8string() + ": " +
                            folder.u8string() + " is " + doubt_words(doubt, meta) + "; " +
                            doubt_fix(doubt, folder, meta) + ", or name another folder");
}

int open_folder_at(int at, const char* name, const fs::path& dir, const fs::path& folder) {
    int fd = ::openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int error = errno;
        struct stat st {};
        if ((error == ELOOP || error == ENOTDIR) && ::fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
            check_folder_stat(dir, folder, st); // says what it is
        throw fs::filesystem_error("cannot write", dir,
                                   std::error_code(error, std::generic_category()));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        int error = errno;
        ::close(fd);
        throw fs::filesystem_error("cannot write", dir,
                                   std::error_code(error, std::generic_category()));
    }
    try {
        check_folder_stat(dir, folder, st);
    } catch (...) {
        ::close(fd);
        throw;
    }
    return fd;
}

} // namespace

void check_destination(const fs::path& dir) {
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) return; // a new layout
    if (S_ISLNK(st.st_mode))
        install::fail_input(dir.u8string() +
                            " is a link; cvm writes an image layout only into the folder itself: "
                            "name the folder the link points to, if it is yours");
    if (!S_ISDIR(st.st_mode)) return; // a file: folder_state says so
    check_folder_stat(dir, dir, st);
    for (const fs::path& sub : {dir / "blobs", dir / "blobs" / "sha256"}) {
        if (::lstat(sub.c_str(), &st) != 0) break;
        check_folder_stat(dir, sub, st);
    }
}

LayoutWriter::LayoutWriter(const fs::path& dir, FolderState state)
    : dir_(dir), mode_(state == FolderState::Layout  ? Mode::Add
                       : state == FolderState::Empty ? Mode::Fill
                                                     : Mode::Stage) {
    try {
        switch (mode_) {
        case Mode::Add:
            work_ = dir;
            check_destination(dir);
            if (::access((dir / "oci-layout").c_str(), W_OK) != 0)
                throw fs::filesystem_error("cannot write", dir,
                                           std::error_code(errno, std::generic_category()));
            lock_.acquire(dir / "oci-layout"); // one export into a layout at a time
            open_folders();
            remove_stale_temps(); // under the lock: no other export is writing them
            break;
        case Mode::Fill:
            work_ = dir;
            check_destination(dir);
            open_folders();
            tree_guard_.watch(work_ / "blobs", platform::Removal::Tree);
            remove_stale_temps();
            break;
        case Mode::Stage: {
            // Folders above DIR that are missing are made, and removed again on failure.
            for (fs::path p = dir.parent_path(); !p.empty() && !fs::exists(p);
                 p = p.parent_path()) {
                made_parents_.insert(made_parents_.begin(), p);
                if (p == p.parent_path()) break;
            }
            for (const auto& p : made_parents_)
                fs::create_directory(p);
            stage_ = dir.parent_path() /
                     fs::u8path("." + dir.filename().u8string() + ".tmp" + pid_text());
            std::error_code ec;
            fs::remove_all(stage_, ec); // a link there is removed, not followed
            tree_guard_.watch(stage_, platform::Removal::Tree);
            work_ = stage_;
            if (::mkdir(stage_.c_str(), 0755) != 0)
                throw fs::filesystem_error("cannot write", dir,
                                           std::error_code(errno, std::generic_category()));
            open_folders();
            break;
        }
        }
    } catch (const fs::filesystem_error& e) {
        discard();
        close_folders();
        throw fs::filesystem_error("cannot write", dir_, e.code());
    } catch (...) {
        // A refusal: nothing of DIR is touched.
        if (mode_ == Mode::Stage) discard();
        close_folders();
        tree_guard_.release();
        throw;
    }
}

void LayoutWriter::open_folders() {
    dir_fd_ = ::open(work_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir_fd_ < 0)
        throw fs::filesystem_error("cannot write", dir_,
                                   std::error_code(errno, std::generic_category()));
    struct stat st {};
    if (::fstat(dir_fd_, &st) != 0)
        throw fs::filesystem_error("cannot write", dir_,
                                   std::error_code(errno, std::generic_category()));
    check_folder_stat(dir_, dir_, st);
    if (::mkdirat(dir_fd_, "blobs", 0755) != 0 && errno != EEXIST)
        throw fs::filesystem_error("cannot write", dir_,
                                   std::error_code(errno, std::generic_category()));
    OwnedFd blobs(open_folder_at(dir_fd_, "blobs", dir_, dir_ / "blobs"));
    if (::mkdirat(blobs.get(), "sha256", 0755) != 0 && errno != EEXIST)
        throw fs::filesystem_error("cannot write", dir_,
                                   std::error_code(errno, std::generic_category()));
    blobs_fd_ = open_folder_at(blobs.get(), "sha256", dir_, dir_ / "blobs" / "sha256");
}

void LayoutWriter::remove_stale_temps() {
    for (int folder : {blobs_fd_, dir_fd_}) {
        int fd = ::dup(folder);
        if (fd < 0) continue;
        DIR* d = ::fdopendir(fd);
        if (!d) {
            ::close(fd);
            continue;
        }
        std::vector<std::string> stale;
        while (dirent* e = ::readdir(d))
            if (is_stale_temp(e->d_name)) stale.push_back(e->d_name);
        ::closedir(d);
        for (const auto& name : stale) {
            struct stat st {};
            if (::fstatat(folder, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
                ::unlinkat(folder, name.c_str(), 0);
        }
    }
}

LayoutWriter::~LayoutWriter() {
    if (!committed_) discard();
    close_folders();
}

void LayoutWriter::close_folders() {
    if (dir_fd_ >= 0) ::close(dir_fd_);
    if (blobs_fd_ >= 0) ::close(blobs_fd_);
    dir_fd_ = blobs_fd_ = -1;
}

int LayoutWriter::fd_of(const fs::path& file) const {
    return file.parent_path() == work_ ? dir_fd_ : blobs_fd_;
}

fs::path LayoutWriter::temp(const std::string& role) {
    fs::path p = work_ / "blobs" / "sha256" / fs::u8path("." + role + ".tmp" + pid_text());
    temps_.push_back(p);
    if (mode_ == Mode::Add) guards_.push_back(std::make_unique<platform::CleanupOnSignal>(p));
    return p;
}

std::unique_ptr<BlobFile> LayoutWriter::create(const std::string& role) {
    fs::path p = temp(role);
    return std::make_unique<BlobFile>(blobs_fd_, p.filename().string(), p, dir_);
}

int LayoutWriter::open_for_reading(const std::string& name) const {
    return ::openat(blobs_fd_, fs::path(name).filename().c_str(),
                    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
}

void LayoutWriter::keep(const fs::path& temp, const std::string& digest) {
    ready_.push_back({temp, digest});
}

Descriptor LayoutWriter::json_blob(const std::string& role, const char* media_type,
                                   const nlohmann::json& doc) {
    std::string text = dumped(doc);
    auto f = create(role);
    f->write(text.data(), text.size());
    Descriptor d{media_type, f->close(), text.size()};
    keep(f->path(), d.digest);
    return d;
}

void LayoutWriter::write_file(const fs::path& file, const std::string& text) {
    written_.push_back(file);
    BlobFile f(dir_fd_, file.filename().string(), file, dir_);
    f.write(text.data(), text.size());
    f.close();
}

void LayoutWriter::commit(const nlohmann::json& index) {
    for (const auto& [temp, digest] : ready_) {
        fs::path final = blob_path(work_, digest);
        std::string name = final.filename().string();
        struct stat st {};
        if (::fstatat(blobs_fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
            // the same bytes, by their name
            ::unlinkat(blobs_fd_, temp.filename().c_str(), 0);
            continue;
        }
        if (::renameat(blobs_fd_, temp.filename().c_str(), blobs_fd_, name.c_str()) != 0)
            throw fs::filesystem_error("cannot write", dir_,
                                       std::error_code(errno, std::generic_category()));
        named_.push_back(final);
    }
    if (mode_ != Mode::Add) write_file(work_ / "oci-layout", kLayoutText);
    fs::path index_temp = work_ / fs::u8path(".index.json.tmp" + pid_text());
    temps_.push_back(index_temp);
    platform::CleanupOnSignal index_guard(index_temp);
    write_file(index_temp, dumped(index));
    if (::renameat(dir_fd_, index_temp.filename().c_str(), dir_fd_, "index.json") != 0)
        throw fs::filesystem_error("cannot write", dir_,
                                   std::error_code(errno, std::generic_category()));
    std::error_code ec;
    if (mode_ == Mode::Stage) {
        fs::rename(stage_, dir_, ec);
        if (ec == std::errc::directory_not_empty || ec == std::errc::file_exists)
            install::fail_operation(
                dir_.u8string() + " was made by another program while cvm wrote the image; nothing "
                                  "was changed there; export again");
        if (ec) throw fs::filesystem_error("cannot write", dir_, ec);
    }
    committed_ = true;
    tree_guard_.release();
    guards_.clear();
}

void LayoutWriter::discard() {
    std::error_code ec;
    auto remove = [&](const fs::path& p) {
        int fd = fd_of(p);
        if (fd >= 0)
            ::unlinkat(fd, p.filename().c_str(), 0);
        else
            fs::remove(p, ec);
    };
    for (const auto& t : temps_)
        remove(t);
    for (const auto& n : named_)
        remove(n);
    for (const auto& w : written_)
        remove(w);
    if (mode_ == Mode::Fill && dir_fd_ >= 0) {
        // The folders made in DIR (checked not to be links when opened).
        ::unlinkat(dir_fd_, "blobs/sha256", AT_REMOVEDIR);
        ::unlinkat(dir_fd_, "blobs", AT_REMOVEDIR);
    }
    if (!stage_.empty()) fs::remove_all(stage_, ec);
    for (auto it = made_parents_.rbegin(); it != made_parents_.rend(); ++it)
        fs::remove(*it, ec);
    tree_guard_.release();
    guards_.clear();
}

} // namespace cvm::image
