// libarchive's handles as extraction uses them (archive_handles.h).
#include "install/archive_handles.h"

#include "platform/platform.h"

#include <mutex>

namespace cvm::install {

namespace fs = std::filesystem;

std::string display(const fs::path& p) {
    return p.filename().string();
}

std::string error_text(archive* a) {
    const char* s = archive_error_string(a);
    return s != nullptr ? s : "unknown error";
}

// libarchive learns the umask by setting it to 0 and back, in archive_write_disk_new() and again
// in every archive_write_header(). Two threads doing that at once can leave the process at
// umask 0 for good (the second saves the first's 0 and restores it), after which every file cvm
// writes is world-writable; and a file another thread creates inside the window is too. So
// these calls take turns, and cvm's own umask is read under the same lock before the first.
namespace {
std::mutex umask_users;
} // namespace

archive* new_write_disk() {
    std::lock_guard<std::mutex> lock(umask_users);
    (void)platform::file_creation_mask();
    return archive_write_disk_new();
}

int write_header(archive* w, archive_entry* e) {
    std::lock_guard<std::mutex> lock(umask_users);
    return archive_write_header(w, e);
}

WriteHandle::WriteHandle() {
    // Our own checks come first (prepare_entry); these are the second line. Paths handed
    // to libarchive are absolute inside the canonical destination, so NOABSOLUTEPATHS
    // is left off on purpose.
    archive_write_disk_set_options(a, ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME |
                                          ARCHIVE_EXTRACT_SECURE_SYMLINKS |
                                          ARCHIVE_EXTRACT_SECURE_NODOTDOT);
}

} // namespace cvm::install
