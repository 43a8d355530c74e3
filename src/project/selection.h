#pragma once
// Where the selected spec comes from: CVM_VERSION, the nearest .cudaversion upward, the global
// default in $CVM_ROOT/version. Reads files only; no TOML, no store access (the shim runs this).
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/spec.h"

namespace cvm {

namespace fs = std::filesystem;

// A spec with the place it came from.
struct Selection {
    // Argument: the SPEC given to the command itself (`cvm exec 11.2 -- nvcc`, `cvm env 11.2`).
    enum class Origin { Variable, ProjectFile, Global, Argument, None };
    Origin origin = Origin::None;
    fs::path file; // for ProjectFile and Global
    int line = 0;  // 1-based line of the spec in `file`
    Spec spec;     // meaningless when origin == None
    // Version files passed over on the way, one line each (another user's .cudaversion in a
    // folder everybody may write to); the caller prints them.
    std::vector<std::string> warnings;
    // Written by `cvm use --force`: why no known release satisfied the spec then (the comment
    // after kForcedMark on its line); empty otherwise.
    std::string forced;
    // "CVM_VERSION", "/p/.cudaversion:3", "global (...)", "the command line" (a SPEC argument)
    std::string origin_text() const;
    // The line for a spec that names nothing installed: `cvm install SPEC`, or, for a forced one,
    // that nothing known satisfies it. `resolve_error` is ResolveError's text.
    std::string not_installed_text(const std::string& resolve_error) const;
};

// The comment `cvm use --force` writes after the spec: "--force:".
inline constexpr const char* kForcedMark = "--force:";

// Thrown when a version file or CVM_VERSION holds something that is not a spec. The message
// names the file and line (or the variable) and says what to do.
class SelectionError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The largest version file read (a spec and its comments, with room to spare); a larger one is
// refused rather than read in part.
constexpr std::size_t kVersionFileLimit = std::size_t(64) << 10;

// The spec text of a version file's content: the first line that is neither empty nor a '#'
// comment, with BOM, CR, surrounding blanks and a trailing comment removed. `line` gets its
// 1-based number. nullopt when the file holds no spec.
std::optional<std::string> spec_text_of(std::string_view content, int* line);

// Reads and parses a version file. nullopt when it is absent or holds no spec; throws
// SelectionError when it cannot be read, is not a regular file (a folder, a FIFO) or is larger
// than kVersionFileLimit (its text is quoted in the message only when the file is no link), and
// TrustError for a global file that someone else could have written (trust.h).
std::optional<Selection> read_version_file(const fs::path& file, Selection::Origin origin);

// Walks up from `start` to the root looking for `.cudaversion`.
std::optional<fs::path> find_project_file(const fs::path& start);

// Precedence: cvm_version (the CVM_VERSION value, if set and non-empty), nearest .cudaversion
// from `cwd` upward, `global_file`. Returns origin None when nothing is selected.
Selection find_selection(const fs::path& cwd, const std::optional<std::string>& cvm_version,
                         const fs::path& global_file);

// Writes a version file atomically (temp file + rename); `forced`, when not empty, is why no
// known release satisfies the spec (`cvm use --force`), kept in a comment on its line.
void write_version_file(const fs::path& file, const Spec& spec, const std::string& forced = {});

} // namespace cvm
