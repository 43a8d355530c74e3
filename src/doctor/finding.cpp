#include "finding.h"

namespace cvm::doctor {

const char* to_string(Severity s) {
    switch (s) {
    case Severity::error:
        return "error";
    case Severity::warning:
        return "warning";
    case Severity::note:
        return "note";
    }
    return "?";
}

} // namespace cvm::doctor
