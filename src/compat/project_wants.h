#pragma once
// From a project's pins (compat/project_pins.h), a range on the command line (`--for
// torch>=2.4`) or a bare name (`--for torch`) to what the solver takes: per framework, the
// releases of cvm's registry the pins allow, newest first, of which the newest that this machine
// can run is taken (choose_newest), saying which newer ones were passed over and why.
#include <string>
#include <vector>

#include "compat/project_pins.h"
#include "compat/solver.h"

namespace cvm::compat {

// One framework's candidates: newest first; one for an exact pin.
struct WantChoices {
    std::string framework; // "pytorch", "tensorflow"
    std::string asked;     // "torch>=2.4,<2.6 from requirements.txt:3", "torch"
    std::vector<FrameworkWant> candidates;
};

struct ProjectWants {
    std::vector<WantChoices> choices;
    std::vector<std::string> notes; // pins cvm does not match (JAX)
};

// The wants of a project's pins. Throws FrameworkInputError (one line) for a pin naming a release
// the registry does not know (with those it knows), for pins that admit no common release or
// name two CUDA builds (naming both), and where only JAX is pinned.
ProjectWants project_wants(const registry::Registry& reg, const std::vector<ProjectPin>& pins);

// `--for NAME` or `--for NAME>=2.4,<2.6`: every release the registry knows in the range; false
// for NAME==VERSION (parse_framework_want reads it), `out` untouched. Throws FrameworkInputError.
bool range_choices(const registry::Registry& reg, const std::string& text, WantChoices& out);

// What choose_newest took for one framework, and the newer releases it passed over.
struct ChoiceLine {
    std::string text; // one line; empty where there was one candidate
    std::vector<std::pair<std::string, std::string>> passed; // release, why
};

// Takes, framework by framework, the newest candidate with which the solver finds a pick (with
// the frameworks taken before it); where none has one, the newest (the solver then says why).
std::vector<FrameworkWant> choose_newest(const std::vector<WantChoices>& choices,
                                         const MachineFacts& machine, const Knowledge& know,
                                         std::vector<ChoiceLine>& lines);

} // namespace cvm::compat
