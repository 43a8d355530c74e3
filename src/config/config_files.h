#pragma once
// Where cvm's settings files are (config.h reads them: the user's, then the machine's). Apart from
// config.h so the trust rules can name the machine's file, which lists trusted_owners.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cvm {

namespace fs = std::filesystem;

// The files in the order they are read (user's first); a variable set to "" turns one off. The
// user's file is left out when there is no home to find it in (HOME unset or relative).
std::vector<fs::path> config_files();
// The machine's file; nullopt when CVM_SYSTEM_CONFIG is "".
std::optional<fs::path> machine_config_file();
// Whether `file` is the machine's file (the one that may hold trusted_owners).
bool is_machine_config_file(const fs::path& file);
// The machine file's trusted_owners, as written (names or uids), read from the file; empty without
// one. Declared here, below trust.h, and defined in config.cpp: the trust rules ask for it the
// first time a file is not plainly the user's or root's, while reading a config needs the trust
// rules. Throws ConfigError (TrustError) as read_config_file does.
std::vector<std::string> machine_trusted_owners();

} // namespace cvm
