#pragma once
// The user's own PATH as Windows keeps it (HKCU\Environment\Path), which installers extend:
// read and written with the registry API, never through setx (which cuts it at 1024 characters),
// its type (REG_EXPAND_SZ, so %USERPROFILE% and the like stay unexpanded) kept.
#include <optional>
#include <string>
#include <vector>

namespace cvm::platform {

// `current` (a ';'-separated list) with each of `dirs` appended that it lacks, compared as
// Windows compares folders (any case, a trailing backslash ignored); nullopt when none is missing.
std::optional<std::string> user_path_with(const std::string& current, const std::vector<std::string>& dirs);

// Appends the missing `dirs` to HKCU\Environment\Path and tells running programs (Explorer,
// new terminals) that the environment changed. Returns the folders it added. Windows only: throws
// std::runtime_error elsewhere, and with the system's reason when the registry refuses.
std::vector<std::string> add_to_user_path(const std::vector<std::string>& dirs);

} // namespace cvm::platform
