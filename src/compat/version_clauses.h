#pragma once
// The version ranges of project pins (compat/project_pins.h) as clauses: PEP 440 specifiers,
// conda's version specs and Poetry's constraints, over versions read loosely (pre-, post- and
// dev-release parts dropped). Pure; shared by the readers of each project file.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compat/project_pins.h"
#include "spec/spec.h"

namespace cvm::compat {

// `v` with its first `n` numbers only ("2.4.1", 2 -> "2.4").
Version first_parts(const Version& v, size_t n);

// A PEP 440 version ("2.4.1", "2.4.0rc1", "2.4.1+cu121", "2.4.*"): its release numbers, with
// the local label and whether it ends in ".*". Pre-, post- and dev-release parts are dropped
// (a series is judged by its release numbers). nullopt when it is not such a version.
struct LooseVersion {
    Version release;
    std::string local;
    bool wildcard = false;
};

std::optional<LooseVersion> loose_version(std::string_view s);

// A comma-separated PEP 440 specifier ("" or "*": any). nullopt when it cannot be read. `tag`
// gets the local label of an ==VERSION+LABEL clause; `bare` is the operator of a clause without
// one ("" refuses it).
std::optional<std::vector<VersionClause>> pep440_clauses(std::string_view spec, std::string* tag,
                                                         std::string_view bare = {});

// A conda version spec ("2.4.1" exact, "2.4.*", "=2.4" (2.4.*), ">=2.4,<2.6", "*").
std::optional<std::vector<VersionClause>> conda_clauses(std::string_view spec);

// Poetry's constraint ("^2.4", "~2.4", ">=2.4,<2.6", ">=2.4 <2.6", "2.4.1", "*").
std::optional<std::vector<VersionClause>> poetry_clauses(std::string_view spec);

} // namespace cvm::compat
