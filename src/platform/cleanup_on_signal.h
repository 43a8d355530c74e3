#pragma once
// What to remove when the process is stopped by SIGINT, SIGTERM or SIGHUP (on Windows the
// console's Ctrl-C, Ctrl-Break and close events): a download's `.part` file, an install's
// staging folder. The one registry for all of cvm.
//
// Files are unlinked in the signal handler itself (async-signal-safe). A folder cannot be walked
// there: the handler wakes a watcher thread and interrupted() turns true, so work loops stop and
// unwind (their guards remove their folders and release them); what is still registered after a
// grace period (2 s) the watcher removes. The process then dies of the signal (exit status
// 130/143/129): the disposition that was there before cvm's takes it (the default action, or a
// handler installed earlier, which is chained to). A SIGHUP that was ignored (nohup) stays
// ignored; SIGINT and SIGTERM ignored from the start (a shell's background job) still stop cvm,
// by the default action. Registering (re)installs cvm's handler when other code replaced it since.
//
// Threads: any thread may watch and release (slots are claimed with atomics, the handler reads
// only complete ones). fork(): a child removes nothing its parent registered; the registry starts
// empty there (a handler running in the child before exec only passes the signal on).
//
// At most kCleanupSlots paths at once; more are accepted but not removed on a signal.
//
//     platform::CleanupOnSignal guard(part_path);      // removed on a signal while in scope
//     ...
//     guard.release();                                 // it became the real file: keep it
//     platform::CleanupOnSignal stage(dir, platform::Removal::Tree); // a folder and its contents
#include "platform/cleanup_slots.h"

#include <filesystem>

namespace cvm::platform {

class CleanupOnSignal {
public:
    CleanupOnSignal() = default;
    explicit CleanupOnSignal(const std::filesystem::path& path, Removal what = Removal::File) { watch(path, what); }
    ~CleanupOnSignal() { release(); }
    CleanupOnSignal(const CleanupOnSignal&) = delete;
    CleanupOnSignal& operator=(const CleanupOnSignal&) = delete;
    CleanupOnSignal(CleanupOnSignal&& other) noexcept : slot_(other.slot_) { other.slot_ = -1; }
    CleanupOnSignal& operator=(CleanupOnSignal&& other) noexcept;

    // Removes `path` if a signal stops the process (replacing what this guard watched).
    void watch(const std::filesystem::path& path, Removal what = Removal::File);
    // Stops watching; the path is left as it is. After an interrupt, the release of the last
    // folder ends the process by that signal (its work has unwound).
    void release();
    bool watching() const { return slot_ >= 0; }

private:
    int slot_ = -1;
};

// True once a stopping signal arrived (for work loops: stop, unwind, let the guards clean up).
bool interrupted();

} // namespace cvm::platform
