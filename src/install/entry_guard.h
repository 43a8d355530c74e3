#pragma once
// The checks every archive entry passes before it is written: a path inside the destination, no
// entry through a symlink the archive made, links that stay inside, no entry listed twice, no
// device files; and the mode each gets (extract.h states the rules).
#include <archive_entry.h>

#include <filesystem>
#include <string>
#include <unordered_set>

#include "install/entry_rules.h"

namespace cvm::install {

class EntryGuard {
public:
    EntryGuard(const std::filesystem::path& archive, const std::filesystem::path& root)
        : archive_(archive), root_(root) {}

    struct Plan {
        bool skip = false; // the root folder itself (in a zip: also an entry not selected)
        ExtractedEntry entry;
        std::filesystem::path target;   // absolute path to write
        std::filesystem::path hardlink; // absolute path of the hard link's target
        int perm = 0644;
    };

    // Throws InstallError (input) naming the archive and the entry when it is refused.
    Plan check(archive_entry* e);

    const std::unordered_set<std::string>& symlinks() const { return symlinks_; }

private:
    [[noreturn]] void refuse(const std::string& entry, const std::string& why) const;
    // No entry may be written through a symlink the archive created.
    void through_symlink(const std::string& path, const std::string& raw) const;

    std::filesystem::path archive_;
    std::filesystem::path root_;
    std::unordered_set<std::string> symlinks_, files_, dirs_, seen_;
};

// Hands the plan's absolute path, hard link target and mode to libarchive's entry.
void apply_plan(archive_entry* e, const EntryGuard::Plan& plan);

} // namespace cvm::install
