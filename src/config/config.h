#pragma once
// cvm's settings files, TOML, both optional:
//
//   the user's:     $CVM_CONFIG, else $XDG_CONFIG_HOME/cvm/config.toml (~/.config/cvm/config.toml;
//                   %APPDATA%\cvm\config.toml on Windows)
//   the machine's:  $CVM_SYSTEM_CONFIG, else /etc/cvm/config.toml (%ProgramData%\cvm\config.toml);
//                   a cluster's administrator puts the shared store here once for everybody
//
//   # read-only stores searched after CVM_ROOT (after CVM_STORE_PATH and the user's own list)
//   store_path = ["/nfs/cvm", "~/team-store"]
//   # machine's file only: owners besides the user and root whose stores and files cvm trusts
//   # (user names from /etc/passwd, or uids); see trust.h
//   trusted_owners = ["cudaadmin", 1234]
//   # "auto" (default): hand nvcc a supported installed host compiler when its own is not;
//   # "off": never (see src/compat/auto_host_compiler.h)
//   host_compiler = "auto"
//
//   # limits for downloads (download_settings.h)
//   [download]
//   min_rate = "10k"
//
// A file that is not a regular file (a FIFO, a folder), cannot be read, or is not trusted
// (trust.h) is refused naming the reason.
// A value of the wrong kind, a relative path or an unknown key is refused with the file and line
// (exit code 2): a misspelt key would otherwise be silently ignored.
//
// The store's layers (Store::from_environment) take store_path and trusted_owners through
// config_cache.h, which keeps them precompiled while the files are unchanged; the store hands the
// owners to the trust rules, which otherwise ask machine_trusted_owners() (config_files.h).
#include <filesystem>
#include <string>
#include <vector>

#include "config/config_error.h"
#include "config/config_files.h"
#include "config/download_settings.h"
#include "platform/platform.h"

namespace cvm {

namespace fs = std::filesystem;

struct Config {
    std::vector<fs::path> store_path;
    DownloadSettings download;               // [download]
    std::vector<std::string> trusted_owners; // names or decimal uids, as written
    std::string host_compiler;               // "auto", "off", or "" when the file does not set it
};

// Where the files are: config_files() and machine_config_file() (config_files.h).

// The trust rules of a config file, on its stat `meta`: nobody else may change it, and the
// machine's (the list of trusted owners comes from it) is its user's or root's, in a folder nobody
// else may add a file to. Throws TrustError. read_config_file and the config cache
// (config_cache.h) both apply it.
void check_config_file_trusted(const fs::path& file, const platform::FileMeta& meta);

// Reads one file; an absent file is an empty Config. The machine's file (machine_config_file()) is
// the only one that may hold trusted_owners, and may only be its user's or root's. Nothing else
// changes: the trust rules ask for the machine's owners themselves (machine_trusted_owners()).
// Throws ConfigError.
Config read_config_file(const fs::path& file);
// Parses a file's text; `origin` names it in errors. Throws ConfigError.
Config parse_config(const std::string& text, const std::string& origin);

// The config files' [download] tables with the CVM_* variables applied on top
// (download_settings.h); unset fields are left for the caller's defaults. Throws ConfigError for a
// bad file or variable.
DownloadSettings download_settings();

} // namespace cvm
