#pragma once
// An entry is only as safe as the folders its programs run and its libraries load from: the
// entry's own folder (which holds `entry` and `files`), the folder of its files (root/, or the
// imported folder), the imported folder behind an assembled root, and its bin and lib folders.
// Each must pass the trust rules (trust.h), or another user could put a program or a library
// where cvm looks. One stat per folder: the shim runs this for every tool it starts.
#include "store/entry.h"
#include "platform/platform.h"

namespace cvm {

// Throws TrustError for the first folder of `e` that another user could change.
void check_entry_trusted(const Entry& e);

// The folders check_entry_trusted() checks besides the entry's own: the folder of its files, the
// imported folder behind an assembled root, its bin and lib folders.
std::vector<fs::path> entry_folders(const Entry& e);
// For `cvm list` and `cvm verify`: the first of the entry's folder, its entry file and its other
// folders (entry_folders) that another user could change, as "PATH is owned by nobody (uid
// 65534), not by you or root; run `chown ...`"; empty when none. One stat each.
std::string entry_doubt_text(const Entry& e);

// The same for a program or library of an entry about to be run or loaded: the file itself, and
// every folder a link chain from it leads through (bin/nvcc -> /home/other/nvcc).
// `known`: the file's stat where the caller has one (the shim's), so it is not made twice.
void check_entry_file_trusted(const Entry& e, const fs::path& file,
                              const platform::FileMeta* known = nullptr);

// Why another user could change `file` ("owned by nobody (uid 65534), not by you or root",
// "writable by every user", "writable by its group"), for `cvm verify`; empty when nobody could.
std::string untrusted_reason(const fs::path& file);

} // namespace cvm
