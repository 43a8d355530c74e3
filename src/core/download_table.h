#pragma once
// Reading the `[download]` table of a config file (see download_settings.h); for config.cpp.
#include <string>
#include <toml++/toml.h>

#include "core/download_settings.h"

namespace cvm {

// `origin` names the file in errors (ConfigError with the line).
DownloadSettings parse_download_table(const toml::node& node, const std::string& origin);

} // namespace cvm
