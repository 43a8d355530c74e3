#pragma once
// Folders removed when the process is interrupted (Ctrl-C, SIGTERM, SIGHUP; on Windows the
// console's Ctrl-C, Ctrl-Break and close events), so an interrupted install leaves nothing
// behind without waiting for the next run to clean up.
//
// On a signal, interrupted() turns true so that work loops can stop and unwind (their own
// destructors then remove the folders and unregister them); what is still registered after a
// short grace period is removed here, and the process then ends as the signal asks (the
// previous handler, or the default action). Other code may register its own paths (download
// `.part` files) through the same class.
#include <filesystem>

namespace cvm::platform {

class RemoveOnInterrupt {
public:
    RemoveOnInterrupt() = default;
    explicit RemoveOnInterrupt(const std::filesystem::path& path) { watch(path); }
    ~RemoveOnInterrupt() { release(); }
    RemoveOnInterrupt(const RemoveOnInterrupt&) = delete;
    RemoveOnInterrupt& operator=(const RemoveOnInterrupt&) = delete;

    // Registers `path` (a file or a folder, removed with everything in it).
    void watch(const std::filesystem::path& path);
    // Unregisters it (the owner removed it, or keeps it).
    void release();

private:
    std::filesystem::path path_;
};

// True once an interrupt arrived.
bool interrupted();

// The process's file-creation mask (umask on POSIX; 0 on Windows), read without changing it.
unsigned file_creation_mask();

} // namespace cvm::platform
