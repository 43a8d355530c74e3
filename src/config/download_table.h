#pragma once
// Reading the `[download]` table of a config file (see download_settings.h); for config.cpp.
#include <string>
#include <toml++/toml.h>

namespace cvm {

// Declared only (download_settings.h has it): download_settings.cpp defines the reader below, so
// including that header here would make the two include each other.
struct DownloadSettings;

// `origin` names the file in errors (ConfigError with the line).
DownloadSettings parse_download_table(const toml::node& node, const std::string& origin);

} // namespace cvm
