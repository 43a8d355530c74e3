// What a failed write says (disk_full.h).
#include "install/disk_full.h"

#include "install/archive_handles.h"
#include "install/error.h"

#include <cerrno>
#include <cstring>

namespace cvm::install {

namespace fs = std::filesystem;

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

} // namespace cvm::install
