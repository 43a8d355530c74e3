#pragma once
// The folders of $CVM_ROOT/.staging where one run of cvm prepares what it moves into the store (an
// install, an import) or out of it (a removal), each locked while its run works in it, and the
// removal of what killed runs left there (Store::clean_staging).
#include <filesystem>
#include <string>

#include "platform/cleanup_on_signal.h"
#include "platform/platform.h"

namespace cvm {

class Store;

// Removes `folder` with everything below it, read-only folders too (an archive's, which an
// installed entry keeps). Never follows a link out of it: an import's files stay where they are.
// What cannot be removed is left.
void remove_whole_tree(const std::filesystem::path& folder);

// <store>/.staging/<purpose>-<pid>-<random>: made empty, and locked by
// <store>/locks/staging-<name>.lock from before it exists until it is gone, so that
// Store::clean_staging tells a running run's folder (lock held) from a killed one's (lock free).
// Removed with what it holds when destroyed (or at remove()); with `removed_on_signal`, also
// when SIGINT, SIGTERM or SIGHUP stops the process (platform/cleanup_on_signal.h). Throws when
// the folder or its lock cannot be made.
class StagingFolder {
public:
    // `purpose`: "install", "import" or "remove" (the names Store::clean_staging looks for).
    StagingFolder(const Store& store, const std::string& purpose, bool removed_on_signal = false);
    ~StagingFolder() { remove(); }
    StagingFolder(const StagingFolder&) = delete;
    StagingFolder& operator=(const StagingFolder&) = delete;

    const std::filesystem::path& path() const { return dir_; }
    // Removes the folder, then lets go of its lock and removes the lock file. Once only.
    void remove();

private:
    std::filesystem::path dir_;
    std::filesystem::path lock_path_;
    platform::FileLock lock_;
    platform::CleanupOnSignal interrupt_guard_;
};

} // namespace cvm
