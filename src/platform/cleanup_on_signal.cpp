// The one signal clean-up registry (cleanup_on_signal.h): the slots, claimed and published with
// atomics, and the removal after an interrupt; the handlers are each OS's
// (posix/cleanup_on_signal.cpp, windows/cleanup_on_signal.cpp).
#include "platform/cleanup_on_signal.h"

#include <chrono>
#include <cstring>
#include <system_error>
#include <thread>

#include "platform/cleanup_detail.h"

namespace cvm::platform {

namespace fs = std::filesystem;

namespace cleanup {

Slot g_slots[kCleanupSlots];
std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};

bool any_active(Removal what) {
    for (Slot& s : g_slots)
        if (s.state.load(std::memory_order_acquire) == kActive && s.what == what) return true;
    return false;
}

void unlink_files() {
    for (Slot& s : g_slots)
        if (s.state.load(std::memory_order_acquire) == kActive && s.what == Removal::File)
            unlink_path(s.path);
}

namespace {

void remove_tree(const fs::path& p) {
    std::error_code ec;
    // Read-only folders from an archive: make them writable so their contents can go.
    for (auto it = fs::recursive_directory_iterator(p, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_directory(ec) && !it->is_symlink(ec))
            fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    // Other threads may still create files in it for a moment: try a few times.
    for (int attempt = 0; attempt < 5; ++attempt) {
        ec.clear();
        fs::remove_all(p, ec);
        if (!ec && !fs::exists(fs::symlink_status(p, ec))) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

} // namespace

void clean_up_after_interrupt() {
    unlink_files();
    for (int i = 0; i < 200 && any_active(Removal::Tree); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    unlink_files();
    for (Slot& s : g_slots)
        if (s.state.load(std::memory_order_acquire) == kActive && s.what == Removal::Tree) {
            PathChar copy[kPathMax];
            std::memcpy(copy, s.path, sizeof copy);
            copy[kPathMax - 1] = 0;
            if (s.state.load(std::memory_order_acquire) == kActive) remove_tree(fs::path(copy));
        }
}

} // namespace cleanup

CleanupOnSignal& CleanupOnSignal::operator=(CleanupOnSignal&& other) noexcept {
    if (this != &other) {
        release();
        slot_ = other.slot_;
        other.slot_ = -1;
    }
    return *this;
}

void CleanupOnSignal::watch(const fs::path& path, Removal what) {
    cleanup::arm(what);
    release();
    const auto& native = path.native();
    if (native.size() + 1 > cleanup::kPathMax) return;
    for (int i = 0; i < kCleanupSlots; ++i) {
        int expected = cleanup::kFree;
        if (!cleanup::g_slots[i].state.compare_exchange_strong(expected, cleanup::kFilling))
            continue;
        cleanup::g_slots[i].what = what;
        std::memcpy(cleanup::g_slots[i].path, native.c_str(),
                    (native.size() + 1) * sizeof(cleanup::PathChar));
        cleanup::g_slots[i].state.store(cleanup::kActive, std::memory_order_release);
        slot_ = i;
        return;
    }
}

void CleanupOnSignal::release() {
    if (slot_ < 0) return;
    const Removal what = cleanup::g_slots[slot_].what;
    cleanup::g_slots[slot_].state.store(cleanup::kFree, std::memory_order_release);
    slot_ = -1;
    // The last folder's owner unwound after an interrupt: end here, by that signal, before the
    // program can exit another way.
    if (what == Removal::Tree && cleanup::g_signal.load() != 0 &&
        !cleanup::any_active(Removal::Tree)) {
        if (!cleanup::registered_here()) return;
        cleanup::end_by_signal(cleanup::g_signal.load());
    }
}

bool interrupted() {
    return cleanup::g_interrupted.load(std::memory_order_relaxed);
}

} // namespace cvm::platform
