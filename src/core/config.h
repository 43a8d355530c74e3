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
//   # "auto" (default): hand nvcc a supported installed host compiler when its own is not;
//   # "off": never (see src/compat/ccbin.h)
//   host_compiler = "auto"
//
// A value of the wrong kind, a relative path or an unknown key is refused with the file and line
// (exit code 2): a misspelt key would otherwise be silently ignored.
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace cvm {

namespace fs = std::filesystem;

class ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Config {
    std::vector<fs::path> store_path;
    std::string host_compiler; // "auto", "off", or "" when the file does not set it
};

// The files in the order they are read (user's first); a variable set to "" turns one off.
std::vector<fs::path> config_files();
// Reads one file; an absent file is an empty Config. Throws ConfigError.
Config read_config_file(const fs::path& file);
// Parses a file's text; `origin` names it in errors. Throws ConfigError.
Config parse_config(const std::string& text, const std::string& origin);

} // namespace cvm
