#pragma once
// `cvm use --for .` (or `--for DIR`) where the active Python has no framework installed: the
// framework pins a project's files state, read as text and never run. The files, in the order
// they are read: requirements*.txt (by name), pyproject.toml (PEP 621 dependencies, optional
// dependencies and dependency groups; Poetry's dependencies), environment.yml (conda, with its
// pip: list), pixi.toml (conda and PyPI dependencies) and Pipfile. The frameworks: torch
// (pytorch, pytorch-gpu), tensorflow (tensorflow-gpu, tensorflow[and-cuda]) and jax (jaxlib).
// Pure apart from read_project_pins, which reads the folder's files; the CLI
// (src/cli/use_for.cpp) turns pins into what the solver takes.
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "spec/spec.h"

namespace cvm::compat {

// The files read, for messages.
extern const char* const kProjectFileNames; // "requirements*.txt, pyproject.toml, ..."

// One clause of a version range. A pin's clauses all hold at once.
struct VersionClause {
    enum class Op { Equal, Prefix, NotEqual, NotPrefix, Less, LessEqual, Greater, GreaterEqual };
    Op op = Op::Equal;
    Version version; // for Prefix and NotPrefix, the part before ".*"
};

struct ProjectPin {
    std::string framework; // "pytorch", "tensorflow" or "jax"
    std::string text;      // as written, trimmed: "torch==2.4.1+cu121", "pytorch=2.4.1"
    std::vector<VersionClause> clauses; // empty: any release
    std::string cuda_tag;               // torch's local version ("cu121" of ==2.4.1+cu121)
    std::optional<Version> cuda; // the CUDA a conda build names (pytorch-cuda=12.1, a build
                                 // string's cuda12.1)
    std::string cuda_from;       // where `cuda` comes from: "pytorch-cuda=12.1 from
                                 // environment.yml:8", "its build string"
    std::string file;            // the file's name inside the folder: "requirements.txt"
    unsigned line = 0;
    std::string where() const; // "requirements.txt:3"
    // The version of the pin's one exact clause ("==2.4.1", conda's "2.4.1"), if it has one.
    std::optional<Version> exact() const;
};

// A file that cannot be read as its kind: what() is "FILE:LINE: what" (one line).
class ProjectFileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Whether some release of the series `release` ("2.4": 2.4.0, 2.4.1, ...) meets every clause.
bool series_allowed(const std::vector<VersionClause>& clauses, const Version& release);

// "torch" -> "pytorch", "tensorflow-gpu" -> "tensorflow", "jaxlib" -> "jax"; "" for others.
std::string framework_of(std::string_view package_name);

// Reads the text of a file a requirements file includes (`-r NAME`, `-c NAME`); nullopt when
// there is none. Throws ProjectFileError (naming `where`) for a name outside the folder.
using IncludeReader =
    std::function<std::optional<std::string>(const std::string& name, const std::string& where)>;

// The parsers: the text of one file, shown as `file`. Each throws ProjectFileError.
// `include` reads `-r`/`-c` files (one level: an included file's own includes are not followed);
// without it they are skipped.
std::vector<ProjectPin> requirements_pins(std::string_view text, const std::string& file,
                                          const IncludeReader& include = {});
std::vector<ProjectPin> pyproject_pins(std::string_view text, const std::string& file);
std::vector<ProjectPin> environment_pins(std::string_view text, const std::string& file,
                                         const IncludeReader& include = {});
std::vector<ProjectPin> pixi_pins(std::string_view text, const std::string& file);
std::vector<ProjectPin> pipfile_pins(std::string_view text, const std::string& file);

// Every pin of the project folder `dir`, file by file in the order above; `read` gets the names
// of the files found. Throws ProjectFileError.
std::vector<ProjectPin> read_project_pins(const std::filesystem::path& dir,
                                          std::vector<std::string>* read = nullptr);

} // namespace cvm::compat
