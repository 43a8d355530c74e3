#include "cli/release_registry.h"

#include <chrono>

#include "cli/context.h"

namespace cvm::cli {

registry::Registry release_registry(const Store& store, registry::OverlayState* state) {
    registry::OverlayState local;
    registry::OverlayState& st = state ? *state : local;
    registry::Registry reg = registry::load_registry_with_overlay(store.cache_dir(), &st);
    static bool noted = false;
    if (!st.problem.empty() && !noted) {
        noted = true;
        note(st.problem);
    }
    return reg;
}

std::string registry_age_line(const registry::OverlayState& state) {
    if (!state.present)
        return "registry as shipped with cvm; `cvm update` looks for newer releases on the mirror";
    std::string age = registry::age_text(state.updated, std::chrono::system_clock::now());
    return "registry updated " + (age.empty() ? state.updated : age) +
           (state.added == 0 ? std::string()
                             : " (" + std::to_string(state.added) + " release" + (state.added == 1 ? "" : "s") +
                                   " newer than cvm's own list)") +
           "; `cvm update` refreshes it";
}

} // namespace cvm::cli
