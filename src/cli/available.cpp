#include "cli/commands.h"
#include "cli/context.h"

namespace cvm::cli {

void list_available(const std::string&, bool) {
    throw Failure("list --available needs the release registry, which this build lacks");
}

} // namespace cvm::cli
