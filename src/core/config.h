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
//   # "off": never (see src/compat/ccbin.h)
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
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/download_settings.h"

namespace cvm {

namespace fs = std::filesystem;

class ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Config {
    std::vector<fs::path> store_path;
    DownloadSettings download; // [download]
    std::vector<std::string> trusted_owners; // names or decimal uids, as written
    std::string host_compiler; // "auto", "off", or "" when the file does not set it
};

// The files in the order they are read (user's first); a variable set to "" turns one off. The
// user's file is left out when there is no home to find it in (HOME unset or relative).
std::vector<fs::path> config_files();
// The machine's file; nullopt when CVM_SYSTEM_CONFIG is "".
std::optional<fs::path> machine_config_file();
// Reads one file; an absent file is an empty Config. `machine`: the machine's file, the only one
// that may hold trusted_owners (and which may only be its user's or root's). Throws ConfigError.
Config read_config_file(const fs::path& file, bool machine = false);
// Parses a file's text; `origin` names it in errors. Throws ConfigError.
Config parse_config(const std::string& text, const std::string& origin);

} // namespace cvm
