#pragma once
// `cvm verify`: are the store's files still what was installed?
//
// An installed entry is compared with its record (<entry dir>/files, install/installed_files.h):
// every file's size and SHA-256, every link's target. An imported entry's files were not written
// by cvm; they are compared with their owner's record where one exists (a wheel's
// *.dist-info/RECORD, dpkg's /var/lib/dpkg/info/<package>.md5sums). A merged view is checked for
// links that lead nowhere.
#include "store/store.h"
#include "install/verify_problem.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cvm::install {

struct EntryCheck {
    enum class State {
        Intact,     // matches its record
        Damaged,    // differs from its record
        Unrecorded, // installed by a cvm that kept no record: nothing to compare
        NoRecord,   // imported, and no owner's record covers its files
        Untrusted,  // imported, its files as recorded, but another user could change some
    };
    Kind kind = Kind::Cuda;
    std::string id;
    bool imported = false;
    State state = State::Intact;
    std::string record;        // what was compared with: a file path, with its kind
    std::size_t checked = 0;   // files compared
    std::size_t uncovered = 0; // imported: files no owner's record lists
    std::vector<VerifyProblem> problems;
    // Imported: its folders and files another user could change (a 0777 include/).
    std::vector<VerifyProblem> untrusted;
    std::string repair;        // the command that repairs it ("" when intact)
};
// "intact", "damaged", "unrecorded", "no-record", "untrusted"
const char* state_name(EntryCheck::State s);

struct ViewCheck {
    std::string name; // "<toolkit id>+<cudnn id>"
    std::filesystem::path path;
    std::vector<VerifyProblem> problems; // broken links
};

// The bytes of an installed entry's files hashed so far, of `total` (called with 0 first, then as
// files finish, from one thread at a time).
using VerifyProgress = std::function<void(std::uint64_t done, std::uint64_t total)>;

// Checks one entry. `dpkg_info` is dpkg's database folder (/var/lib/dpkg/info); `progress`, when
// given, follows the hashing of an installed entry's files.
EntryCheck verify_entry(const Entry& e, const std::filesystem::path& dpkg_info, const VerifyProgress& progress = {});

// Checks the merged views (only those that use `id`, when not empty).
std::vector<ViewCheck> verify_views(const Store& store, const std::string& id);


} // namespace cvm::install
