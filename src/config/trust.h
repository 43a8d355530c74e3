#pragma once
// Whose files cvm believes, as git's safe.directory and OpenSSH's StrictModes: a store layer, a
// config file, the shims folder or the global version file is trusted when it is
//   - owned by the user cvm runs as, by root, by the user who ran sudo (for root), or by an
//     owner listed in `trusted_owners` of the machine's config.toml, and
//   - not writable by everybody (a sticky /tmp-style folder included: anybody can add to it), and
//   - not writable by its group, unless its owner is listed, or it is the user's own file and
//     the group is the user's private group.
// Anything else is refused with one line naming the path, the owner and what to do. The folders
// above a store layer are checked by folder_chain.h. The common
// case (own or root's file, no group or world write) is decided from the stat already made,
// with no look-up of names and no config read.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.h"
#include "platform/platform.h"

namespace cvm {

namespace fs = std::filesystem;

// Thrown for a file or folder cvm will not trust (exit code 2, as a config mistake).
class TrustError : public ConfigError {
public:
    using ConfigError::ConfigError;
};

enum class Doubt { None, Owner, WorldWritable, GroupWritable };

// Judges a stat. `trusted` lists extra owners' uids (trusted_owners); nullptr means "look them
// up when needed" from the machine's config (trusted_owner_ids()).
Doubt doubt_of(const platform::FileMeta& meta, const std::vector<std::uint32_t>* trusted = nullptr);

// Throws TrustError when doubt_of() finds something; `what` says what the path is ("the store
// folder", "the config file"...). The path (UTF-8 in the string form, for the shim's hot path) is
// only made into a message when something is wrong.
void check_trusted_at(const char* what, std::string_view utf8_path, const platform::FileMeta& meta,
                      const std::vector<std::uint32_t>* trusted = nullptr);
inline void check_trusted(const char* what, const fs::path& path, const platform::FileMeta& meta,
                          const std::vector<std::uint32_t>* trusted = nullptr) {
    if (doubt_of(meta, trusted) != Doubt::None)
        check_trusted_at(what, path.u8string(), meta, trusted);
}

// What is wrong, in words after "it is" / "the folder is": "owned by nobody (uid 65534), not by
// you or root", "writable by every user (owner ...)", "writable by its group (owner ...)"; on
// Windows the accounts ("writable by BUILTIN\\Users (S-1-5-32-545) (owner ...)").
std::string doubt_words(Doubt doubt, const platform::FileMeta& meta);
// What to run about it ("run `chmod o-w PATH`", takeown or icacls on Windows); `listable`: also
// say that trusted_owners could accept the owner.
std::string doubt_fix(Doubt doubt, const fs::path& path, const platform::FileMeta& meta,
                      bool listable = true);

// The one-line message for a doubt; `listable`: trusted_owners could accept the owner.
std::string distrust_message(const std::string& what, const fs::path& path,
                             const platform::FileMeta& meta, Doubt doubt, bool listable = true);

// The folders a chain of links from `file` leads through: for each link on the way (at most 40),
// the folder of what it names. Empty when `file` is no link. A program reached so is only as safe
// as each of them: whoever may change one could put another file there. One lstat per hop, and a
// readlink per link.
std::vector<fs::path> link_chain_folders(const fs::path& file);

// The uids of the machine config's trusted_owners (names resolved through /etc/passwd, numbers
// as they are), asked of the config once per process (machine_trusted_owners(), config_files.h).
const std::vector<std::uint32_t>& trusted_owner_ids();
// Hands over the machine config's trusted_owners that a caller already has (the store has them
// from config_store_paths, often without reading any TOML), so they are not read again.
void use_trusted_owners(const std::vector<std::string>& owners);
// "nobody (uid 65534)" or "uid 1234".
std::string owner_text(std::uint32_t uid);
// The owner of the file `meta` describes in those words; on Windows its account ("NT
// AUTHORITY\\ANONYMOUS LOGON (S-1-5-7)"), from the security descriptor read with `meta`
// (platform.h).
std::string owner_text_of(const platform::FileMeta& meta);

} // namespace cvm
