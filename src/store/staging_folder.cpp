// The locked staging folders of installs, imports and removals, and the removal of those that
// killed runs left (staging_folder.h; Store::clean_staging, declared in store.h).
#include "store/staging_folder.h"

#include <cstdio>
#include <exception>
#include <random>
#include <system_error>

#include "store/store.h"

namespace cvm {

namespace fs = std::filesystem;

namespace {

// The purposes whose folders Store::clean_staging may remove; others (merged views being
// built) are not locked, so a running one's cannot be told from a killed one's.
const char* const kLockedStagingPurposes[] = {"install-", "import-", "remove-"};

// Sixteen hex digits, so that no two runs (nor a run and a killed one of the same pid) share a
// folder or a lock file.
std::string staging_folder_suffix() {
    std::random_device rd;
    char buf[17];
    std::snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
    return buf;
}

fs::path staging_lock_of(const Store& store, const std::string& name) {
    return store.locks_dir() / ("staging-" + name + ".lock");
}

} // namespace

void remove_whole_tree(const fs::path& folder) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(folder, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_directory(ec) && !it->is_symlink(ec))
            fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(folder, ec);
}

StagingFolder::StagingFolder(const Store& store, const std::string& purpose,
                             bool removed_on_signal) {
    fs::create_directories(store.staging_dir());
    fs::create_directories(store.locks_dir());
    std::string name =
        purpose + "-" + std::to_string(platform::process_id()) + "-" + staging_folder_suffix();
    // Locked before the folder exists: a folder whose lock is free is a killed run's.
    lock_path_ = staging_lock_of(store, name);
    lock_.acquire(lock_path_);
    dir_ = store.staging_dir() / name;
    if (removed_on_signal) interrupt_guard_.watch(dir_, platform::Removal::Tree);
    try {
        fs::create_directory(dir_);
    } catch (...) {
        remove();
        throw;
    }
}

void StagingFolder::remove() {
    if (dir_.empty()) return;
    remove_whole_tree(dir_);
    dir_.clear();
    interrupt_guard_.release();
    lock_.release();
    std::error_code ec;
    fs::remove(lock_path_, ec);
}

void Store::clean_staging() const {
    std::error_code ec;
    for (fs::directory_iterator it(staging_dir(), ec), end; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().u8string();
        bool locked_kind = false;
        for (const char* purpose : kLockedStagingPurposes)
            locked_kind = locked_kind || name.rfind(purpose, 0) == 0;
        if (!locked_kind) continue;
        fs::path lock_path = staging_lock_of(*this, name);
        // A folder left by a cvm that took no lock may come before the locks' folder does.
        std::error_code made;
        fs::create_directories(locks_dir(), made);
        platform::FileLock lock;
        try {
            if (!lock.acquire(lock_path, true)) continue; // its run is still working
        } catch (const std::exception&) {
            continue;
        }
        remove_whole_tree(it->path());
        lock.release();
        std::error_code e2;
        fs::remove(lock_path, e2);
    }
}

} // namespace cvm
