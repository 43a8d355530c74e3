#pragma once
// The folders above what cvm trusts, as OpenSSH's StrictModes checks those above ~/.ssh: a store
// layer is only as safe as every folder on its path, since whoever may rename an entry of a
// folder can move the layer away and put their own in its place. Each folder from the layer up
// to / must pass the trust rules (trust.h), except that a sticky folder (/tmp) may be writable by
// others: they cannot rename what is not theirs there. Symbolic links on the way are followed and
// the folders of their targets checked too. POSIX only: on Windows nothing is checked here (the
// layer's own folders are, by their access lists).
#include <filesystem>
#include <string>

namespace cvm {

namespace fs = std::filesystem;

// Throws TrustError naming the first folder on `folder`'s path that another user could rename
// entries of; `what` is what `folder` is ("the store folder"). Folders that do not
// exist are passed over. About one lstat per path component.
void check_folder_chain(const std::string& what, const fs::path& folder);

} // namespace cvm
