// PATH-style lists (PATH, LD_LIBRARY_PATH, CPATH): split on the separator of the OS named, and
// joined back. An empty item stays an item (it means the current folder to a POSIX shell).
#pragma once

#include <string>
#include <vector>

#include "platform/platform.h"

namespace cvm {

std::vector<std::string> split_path_list(const std::string& list, platform::Os os);
std::string join_path_list(const std::vector<std::string>& items, platform::Os os);

} // namespace cvm
