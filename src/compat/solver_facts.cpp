#include "compat/solver_facts.h"

namespace cvm::compat {

const char* constraint_name(Constraint c) {
    switch (c) {
    case Constraint::Framework:
        return "framework";
    case Constraint::Platform:
        return "platform";
    case Constraint::Driver:
        return "driver";
    case Constraint::Gpu:
        return "gpu";
    case Constraint::HostCompiler:
        return "host_compiler";
    case Constraint::Cudnn:
        return "cudnn";
    }
    return "framework";
}

const char* constraint_words(Constraint c) {
    switch (c) {
    case Constraint::Gpu:
        return "GPU";
    case Constraint::HostCompiler:
        return "host compiler";
    case Constraint::Cudnn:
        return "cuDNN";
    default:
        return constraint_name(c);
    }
}

} // namespace cvm::compat
