// The user's PATH in the registry (user_path.h) exists only on Windows.
#include "platform/user_path.h"

#include <stdexcept>

namespace cvm::platform {

std::vector<std::string> add_to_user_path(const std::vector<std::string>&) {
    throw std::runtime_error("the user's PATH in the registry exists only on Windows; on Linux put "
                             "`eval \"$(cvm init bash)\"` in your shell's rc file");
}

} // namespace cvm::platform
