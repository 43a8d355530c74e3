#pragma once
// What every command and every shim run needs from the config files (config.h): the read-only
// stores of their store_path, and the machine's trusted_owners. Parsing TOML costs the shim more
// than the rest of its work, so after a file is read its answer is kept, precompiled, in
// $CVM_ROOT/cache/config, with what a stat says of each file (platform.h: change_stamp; the
// path, device, inode, mode, owner, size and both times). A later run stats the files (one stat
// each) and takes the kept answer only when
//   - every stamp, the list of files (CVM_CONFIG, CVM_SYSTEM_CONFIG...), the user it runs as (and
//     SUDO_UID) and HOME (store_path's "~/") are what they were,
//   - the cache file is whole (its size and hash hold) and its own: the user's (or root's) and
//     writable by nobody else, as the listing index (store_index.cpp) is judged;
// anything else (missing, stale, damaged, another user's, a Windows store) reads the files as
// before, with the same errors, and writes the cache anew where the store can be written. A
// cache is only written for files whose times are two seconds old, so that an edit within the
// same clock tick cannot hide behind the stamp. The trust checks of each file (trust.h) are made
// either way, on the stat just made. With no config file at all the stats are the whole cost:
// there is nothing to read or keep.
#include <filesystem>
#include <string>
#include <vector>

namespace cvm {

namespace fs = std::filesystem;

struct ConfigStores {
    fs::path file;                    // a config file
    std::vector<fs::path> store_path; // its store_path, as read_config_file gives it
};

// What the config files say of the stores: each file's store_path, and the machine file's
// trusted_owners (the trust rules take them from the caller: use_trusted_owners, trust.h).
struct ConfigAnswer {
    std::vector<ConfigStores> stores;        // each of config_files(), the user's first
    std::vector<std::string> trusted_owners; // the machine file's, as written
};

// The answer from the cache of the store rooted at `root` when it is current, else from the files
// (absent files give none). Throws ConfigError (TrustError) as read_config_file does.
ConfigAnswer config_store_paths(const fs::path& root);

// Where that cache is kept: <root>/cache/config.
fs::path config_cache_file(const fs::path& root);

} // namespace cvm
