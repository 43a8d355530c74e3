#pragma once
// Writing into an image layout so that, until commit(), it is as it was: every blob goes in under
// a temporary name and is named by its digest at commit(), index.json last. Where DIR is
//   absent:          a staging folder `.NAME.tmp<pid>` beside it, renamed into place at the end;
//   an empty folder: written in place (it may be a mount point), emptied again on failure;
//   an image layout: written in place under a lock on its `oci-layout`; the blobs it gained are
//                    removed again when index.json cannot be replaced.
// A signal (Ctrl-C) removes the staging folder or temporary files at once (cleanup_on_signal.h).
// Failures are std::filesystem::filesystem_error naming DIR, never a temporary name.
// DIR (an empty folder or a layout), its blobs and blobs/sha256 must be the user's (or root's,
// config/trust.h) folders and no links (check_destination); files are made and renamed relative
// to the folders opened (openat, renameat, O_NOFOLLOW), so a link put there later is not followed.
// Temporary files of exports killed with -9 (`.NAME.tmp<pid>`, that pid gone) are removed.
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "image/oci_layout.h"
#include "platform/cleanup_on_signal.h"
#include "platform/platform.h"

namespace cvm::image {

namespace fs = std::filesystem;

class BlobFile;

// Refuses (install::InstallError, input: one line naming the path and what to do) a destination
// that exists and is a link, or whose folder, blobs or blobs/sha256 is a link, not a folder, or
// not trusted (owned by another user, writable by others: config/trust.h). Changes nothing.
void check_destination(const fs::path& dir);

class LayoutWriter {
public:
    // `state` is folder_state(dir) (Absent, Empty or Layout).
    LayoutWriter(const fs::path& dir, FolderState state);
    ~LayoutWriter(); // without commit(): removes what it wrote
    LayoutWriter(const LayoutWriter&) = delete;
    LayoutWriter& operator=(const LayoutWriter&) = delete;

    // The folder whose blobs/sha256 the blobs are written in (the staging folder, or DIR).
    const fs::path& work() const { return work_; }
    // A new file for a blob, under a temporary name (`role`: "layer", "config"...), made in the
    // blobs folder opened (never through a link); its path() is what keep() takes.
    std::unique_ptr<BlobFile> create(const std::string& role);
    // A file of the blobs folder (a temporary one: its path; a blob: its digest's name) opened
    // for reading, without following a link or waiting on a FIFO; -1 when it cannot be.
    int open_for_reading(const std::string& name) const;
    // `temp` holds the blob `digest`: it is given that name at commit().
    void keep(const fs::path& temp, const std::string& digest);
    // A JSON document as a blob (compact, keys sorted), kept.
    Descriptor json_blob(const std::string& role, const char* media_type,
                         const nlohmann::json& doc);
    // Names the blobs, writes oci-layout (a new layout) and index.json, and renames a staging
    // folder into place.
    void commit(const nlohmann::json& index);

private:
    enum class Mode { Stage, Fill, Add };
    fs::path temp(const std::string& role);
    void open_folders();
    void close_folders();
    void remove_stale_temps();
    int fd_of(const fs::path& file) const; // the open folder `file` is in
    void write_file(const fs::path& file, const std::string& text);
    void discard();

    fs::path dir_, work_, stage_;
    Mode mode_;
    bool committed_ = false;
    int dir_fd_ = -1, blobs_fd_ = -1; // work_ and work_/blobs/sha256, opened
    platform::FileLock lock_;
    platform::CleanupOnSignal tree_guard_; // the staging folder, or the blobs folder made in DIR
    std::vector<std::unique_ptr<platform::CleanupOnSignal>> guards_;
    std::vector<fs::path> made_parents_, temps_, named_, written_;
    std::vector<std::pair<fs::path, std::string>> ready_;
};

} // namespace cvm::image
