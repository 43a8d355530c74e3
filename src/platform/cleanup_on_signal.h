#pragma once
// Files to remove when the process is stopped by SIGINT, SIGTERM (or SIGHUP on POSIX): a
// download's `.part` file, a staging file. The handler only unlinks the registered paths
// (async-signal-safe), then restores the disposition that was there before and raises the
// signal again, so the process still dies of it (exit status 130/143) and any handler installed
// before cvm's still runs. A signal that was ignored (nohup) stays ignored.
//
// Any code may register paths; each registration (re)installs the handler when another took its
// place since, keeping that one as the handler to chain to. At most
// kCleanupSlots paths are held at once; registering more keeps working but those extra paths are
// not removed on a signal. Folders are not removed (no async-signal-safe way to walk a tree):
// register a folder's files, or remove the folder at the next start.
//
//     platform::CleanupOnSignal guard(part_path); // removed on SIGINT/SIGTERM while in scope
//     ...
//     guard.release();                            // it became the real file: keep it
#include <filesystem>

namespace cvm::platform {

constexpr int kCleanupSlots = 64;

class CleanupOnSignal {
public:
    CleanupOnSignal() = default;
    explicit CleanupOnSignal(const std::filesystem::path& path) { watch(path); }
    ~CleanupOnSignal() { release(); }
    CleanupOnSignal(const CleanupOnSignal&) = delete;
    CleanupOnSignal& operator=(const CleanupOnSignal&) = delete;
    CleanupOnSignal(CleanupOnSignal&& other) noexcept : slot_(other.slot_) { other.slot_ = -1; }
    CleanupOnSignal& operator=(CleanupOnSignal&& other) noexcept;

    // Removes `path` if a signal stops the process (replacing what this guard watched).
    void watch(const std::filesystem::path& path);
    // Stops watching; the file is left as it is.
    void release();
    bool watching() const { return slot_ >= 0; }

private:
    int slot_ = -1;
};

} // namespace cvm::platform
