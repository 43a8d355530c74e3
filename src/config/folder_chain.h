#pragma once
// The folders above what cvm trusts, as OpenSSH's StrictModes checks those above ~/.ssh: a store
// layer is only as safe as every folder on its path, since whoever may rename an entry of a
// folder can move the layer away and put their own in its place. Each folder from the layer up
// to / must pass the trust rules (trust.h), except that a sticky folder (/tmp) may be writable by
// others: they cannot rename what is not theirs there. Symbolic links on the way are followed and
// the folders of their targets checked too. POSIX only: on Windows nothing is checked here (the
// layer's own folders are, by their access lists).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace cvm {

namespace fs = std::filesystem;

// Throws TrustError naming the first folder on `folder`'s path that another user could rename
// entries of; `what` is what `folder` is ("the store folder"). Folders that do not
// exist are passed over. About one lstat per path component. `trusted`: as for doubt_of().
void check_folder_chain(const std::string& what, const fs::path& folder,
                        const std::vector<std::uint32_t>* trusted = nullptr);

// The folder of the machine's config file (which lists trusted_owners), judged with no listed
// owners: on POSIX its whole path as above; on Windows the folder itself (%ProgramData%\cvm:
// %ProgramData% lets every user add folders, so its own access list is what keeps others out).
void check_machine_config_folder(const fs::path& file);

} // namespace cvm
