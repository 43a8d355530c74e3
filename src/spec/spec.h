#pragma once
// Versions, toolchain identifiers and specs (CUDA[+CUDNN]) as the CLI contract defines them.
// Pure: no I/O here, so everything is tested exhaustively in tests/unit/core/spec_test.cpp.
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cvm {

// A dotted version of 1..N non-negative numbers ("11.2.2", "8.1.0.77").
struct Version {
    std::vector<unsigned> parts;

    std::string str() const;
    bool empty() const { return parts.empty(); }
    unsigned major() const { return parts.empty() ? 0 : parts[0]; }
    unsigned minor() const { return parts.size() < 2 ? 0 : parts[1]; }
    // True when `prefix` equals the first prefix.parts.size() numbers of this version.
    bool has_prefix(const Version& prefix) const;
    friend bool operator==(const Version& a, const Version& b) { return a.parts == b.parts; }
    friend bool operator!=(const Version& a, const Version& b) { return !(a == b); }
    // Numeric order; a shorter version sorts before a longer one with the same prefix.
    friend bool operator<(const Version& a, const Version& b) { return a.parts < b.parts; }
    friend bool operator>(const Version& a, const Version& b) { return b < a; }
};

// Parses "1.2.3": only digits and dots, each number at most 9 digits, between min_parts and
// max_parts numbers. nullopt on anything else.
std::optional<Version> parse_version(std::string_view text, size_t min_parts = 1,
                                     size_t max_parts = 4);
// The same without allocating: the numbers go to `parts` (room for max_parts, at most
// kMaxVersionParts); returns how many, 0 when `text` is not such a version.
constexpr size_t kMaxVersionParts = 8;
size_t parse_version_parts(std::string_view text, unsigned* parts, size_t max_parts);

// A cuDNN build: its version and the CUDA it was built for ("11.2" per minor, "12" per major).
struct CudnnId {
    Version version;
    Version cuda; // 1 number (per-major build) or 2 numbers (per-minor build)

    std::string str() const; // "8.1.0.77-cuda11.2"
    // Whether a build for `cuda` serves a toolkit of version `toolkit`: same minor for
    // per-minor builds, same major for per-major ones.
    bool serves(const Version& toolkit) const;
};

std::optional<CudnnId> parse_cudnn_id(std::string_view text);

// An NCCL build: its version and the CUDA it was built for, as the library's own banner says it
// ("NCCL version 2.21.5+cuda12.4") and NVIDIA's archive names it (nccl_2.21.5-1+cuda12.4_x86_64).
struct NcclId {
    Version version; // 3 numbers
    Version cuda;    // 1 number (a wheel's cu12, when the library does not say) or 2

    std::string str() const; // "2.21.5-cuda12.4"
    // NCCL links the CUDA runtime statically and talks to the driver: a build serves every
    // toolkit of its CUDA major.
    bool serves(const Version& toolkit) const;
};
std::optional<NcclId> parse_nccl_id(std::string_view text);
// A toolkit id is exactly three numbers.
std::optional<Version> parse_toolkit_id(std::string_view text);

// A toolkit's name, given with `cvm import DIR --as NAME` so that two toolkits of one release can
// be registered side by side: an ASCII letter, then letters, digits, '.', '_' or '-' (at most 64,
// not ending in '.' or '-'); not a word cvm reads otherwise (system, latest, cuda, cudnn, nccl...,
// Windows' device names). Empty when `text` is such a name, else why it is not.
std::string toolkit_name_problem(std::string_view text);
inline bool is_toolkit_name(std::string_view text) { return toolkit_name_problem(text).empty(); }

// A selection request, CUDA[+CUDNN][+ncclVERSION]. `system` means: no override.
struct Spec {
    bool system = false;
    Version cuda;                      // 1..3 numbers; empty when `name` is set
    std::string name;                  // the toolkit's name instead (is_toolkit_name)
    std::optional<Version> cudnn;      // 1..4 numbers
    std::optional<Version> cudnn_cuda; // optional "-cudaX[.Y]" on the cuDNN part
    std::optional<Version> nccl;       // 1..3 numbers after "+nccl"
    std::optional<Version> nccl_cuda;  // optional "-cudaX[.Y]" on the NCCL part
    std::string str() const;
};

// Thrown for text that is not a spec. what() says what is wrong with the value, without the
// origin; callers add the file and line.
class SpecError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
    SpecError(const std::string& message, std::string reason)
        : std::runtime_error(message), reason_(std::move(reason)) {}
    // What is wrong without the value itself ("it contains a path separator"), for a value that
    // must not be shown (a version file that is a link to someone's secrets).
    const std::string& reason() const { return reason_; }

private:
    std::string reason_;
};

// Parses a spec: "12", "11.2", "11.2.2+8.1.0.77", "12.4+9", "12.4+9.1+nccl2.21", "13.0+nccl2.28",
// "system", a toolkit's name ("mine", "mine+9.1"), and the full form printed in CVM_ACTIVE ("11.2.2+8.1.0.77-cuda11.2",
// "12.4.1+nccl2.21.5-cuda12.4"). Throws SpecError.
Spec parse_spec(std::string_view text);

// Printable form of a value for an error message: control characters escaped, length capped.
std::string printable(std::string_view text);

} // namespace cvm
