#pragma once
// One thing `cvm verify` found wrong with a file: below the check of an entry (verify.h) and the
// reading of a tree (verify_tree.h), which both report them.
#include <string>

namespace cvm::install {

struct VerifyProblem {
    std::string path; // relative to the entry's root (installed) or absolute (imported)
    std::string what; // "missing", "content differs (sha256 ...)", ...
};

} // namespace cvm::install
