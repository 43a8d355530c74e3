#pragma once
// The registry of cleanup_on_signal.cpp, shared inside the platform layer with each OS's own
// half (posix/cleanup_on_signal.cpp: signal handlers, a watcher thread, fork; windows/: a console
// handler). Only async-signal-safe work is reached from a handler.
#include <atomic>
#include <cstddef>
#include <filesystem>

#include "platform/cleanup_slots.h"

namespace cvm::platform::cleanup {

using PathChar = std::filesystem::path::value_type;
constexpr std::size_t kPathMax = 4096 / sizeof(PathChar); // 4 KiB of path per slot

enum : int { kFree = 0, kFilling = 1, kActive = 2 };

// A slot is claimed (kFree -> kFilling) with a compare-exchange, filled, then published
// (kActive); the handler reads only published slots.
// Every member initialized to zero (kFree, File, an empty path), so the table is constant-initialized:
// it lies in .bss untouched until used, instead of a start-up constructor writing into each slot,
// which cost every program, the shim first, 64 page faults (about 0.1 ms) before main.
struct Slot {
    std::atomic<int> state{kFree};
    Removal what = Removal::File;
    PathChar path[kPathMax] = {};
};

extern Slot g_slots[kCleanupSlots];
extern std::atomic<bool> g_interrupted;
extern std::atomic<int> g_signal; // the stopping signal that arrived (SIGINT for a console event)

bool any_active(Removal what);
// Async-signal-safe: unlink only.
void unlink_files();
// On an ordinary thread after a signal: lets the owners unwind for a moment, then removes what
// is still registered.
void clean_up_after_interrupt();

// Each OS's half.
// Removes one file (async-signal-safe).
void unlink_path(const PathChar* path);
// Before a path of kind `what` is registered: cvm's handlers (re)installed, the watcher started.
void arm(Removal what);
// Whether this process made the registrations (a child of fork() did not).
bool registered_here();
// Ends the process as the signal would have (from an ordinary thread).
void end_by_signal(int sig);

} // namespace cvm::platform::cleanup
