#pragma once
// The registry: what cvm knows about NVIDIA's releases without asking the network. CUDA releases
// (dates, manifests, component versions, minimum drivers), cuDNN releases (builds per CUDA
// variant, supported CUDA ranges, archive names, library sets) and the CUDA/cuDNN that PyTorch
// and TensorFlow were built with. The data is TOML under registry/; this module loads it and
// answers questions about it. Loading does I/O; every lookup is pure.
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spec/spec.h"

namespace cvm::registry {

// A malformed or missing registry file. what() is one line: "<file>:<line>:<column>: <key>:
// <problem>" where the position is known.
class RegistryError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class Platform { Linux, Windows };

// "linux" / "windows".
const char* platform_name(Platform p);

// A driver version as NVIDIA writes it ("460.27.03"). `text` keeps the leading zeros for
// display; `value` is for comparing ("580.159.04" is newer than "580.65.06").
struct DriverVersion {
    std::string text;
    Version value;
};

struct CudaRelease {
    Version version;                             // 11.2.2
    std::string date;                            // "2021-03" or "2022-10-03"; may be empty
    std::string manifest;                        // "redistrib_11.8.0.json"; empty before 11.4.0
    std::optional<Version> cudart;               // cuda_cudart component version
    std::optional<Version> nvcc;                 // cuda_nvcc component version
    std::optional<DriverVersion> driver_linux;   // GA minimum
    std::optional<DriverVersion> driver_windows; // GA minimum; absent where NVIDIA says N/A
    // NVIDIA's local installers of a release without a manifest ("cuda_11.2.2_460.32.03_linux.run",
    // "cuda_11.2.2_461.33_win10.exe"); empty where none is known. The Linux runfile's SHA-256 where
    // a public source gives one (installer_source names it); NVIDIA's md5sum.txt is read at install.
    std::string installer_linux, installer_windows, installer_linux_sha256, installer_source;
    std::string source;
    std::vector<std::string> inferred; // keys of this row no source confirmed

    bool is_inferred(std::string_view key) const;
};

// The oldest driver that runs every release of a CUDA major through minor-version compatibility.
struct MinorCompat {
    unsigned major = 0;
    DriverVersion driver_linux;
    std::optional<DriverVersion> driver_windows;
    std::string source;
};

struct CudnnBuild {
    Version cuda;         // the variant: "11.2" (per-minor build) or "12" (per-major build)
    Version supports_min; // oldest CUDA minor supported, e.g. 11.0
    Version supports_max; // newest CUDA minor supported, e.g. 11.2
    std::vector<std::string> linux_archives; // legacy archive names, where known
    std::vector<std::string> windows_archives;
};

struct CudnnRelease {
    Version version; // 8.1.0.77
    std::string date;
    std::string manifest; // "redistrib_8.9.7.json"; empty for releases without one
    std::string source;
    std::vector<std::string> inferred;
    std::vector<CudnnBuild> builds;

    bool is_inferred(std::string_view key) const;
};

// The libraries of a complete cuDNN of one major version, besides the main library.
struct CudnnLibrarySet {
    unsigned major = 0;
    std::vector<std::string> sublibraries; // "ops_infer", ... ; empty for cuDNN 7
    std::string source;
};

struct FrameworkBuild {
    std::string tag;                  // PyTorch wheel index tag ("cu121"); empty for TensorFlow
    Version cuda;                     // 12.1
    std::optional<Version> cuda_full; // 12.1.1, where known
    Version cudnn;                    // 8.9.2.26 (PyTorch) or 8.1 (TensorFlow)
};

struct FrameworkRelease {
    std::string name; // "pytorch", "tensorflow"
    Version version;  // 2.1
    std::string date;
    bool bundles_cudnn = false; // brings its own cuDNN: the system's does not matter to it
    bool windows_gpu = false;   // native Windows GPU support
    bool confirmed = true;      // false when the row has confidence = "inferred"
    std::string source;
    std::vector<std::string> inferred;
    std::vector<FrameworkBuild> builds;
};

struct Registry {
    std::filesystem::path dir;     // where it was loaded from ("<embedded>" for the built-in copy)
    std::vector<CudaRelease> cuda; // sorted by version, oldest first
    std::vector<MinorCompat> minor_compat; // sorted by major
    std::vector<CudnnRelease> cudnn;       // sorted by version, oldest first
    std::vector<CudnnLibrarySet> cudnn_library_sets;
    std::vector<FrameworkRelease> frameworks; // sorted by name, then version
};

// ---- Loading ------------------------------------------------------------------------------

// Reads cuda.toml, cudnn.toml and frameworks.toml from `dir`. Throws RegistryError naming the
// file, line and key of the first problem.
Registry load_registry(const std::filesystem::path& dir);

// The three files' texts, as read from disk or embedded; `origin` prefixes the file names in
// error messages. Throws RegistryError.
struct RegistryTexts {
    std::string cuda_toml;
    std::string cudnn_toml;
    std::string frameworks_toml;
};
Registry parse_registry(const RegistryTexts& texts, const std::filesystem::path& origin);

// Whether the registry files were compiled into this binary, and the copy that was.
bool has_embedded_registry();
Registry load_embedded_registry(); // throws RegistryError when there is none

// ---- Where the registry is -------------------------------------------------------------------

// The candidates, in order: $CVM_REGISTRY_DIR, <exe dir>/../share/cvm/registry, then the source
// tree's registry/ (the build's CVM_SOURCE_REGISTRY_DIR). A directory counts when it holds
// cuda.toml. `env_value` set but not a registry is an error (an explicit choice is not silently
// replaced by another). Returns nullopt when nothing fits.
struct RegistryDirInputs {
    std::optional<std::string> env_value; // CVM_REGISTRY_DIR
    std::filesystem::path exe_path;       // the running program (may be empty)
    std::filesystem::path source_dir;     // compiled-in source tree registry (may be empty)
};
std::optional<std::filesystem::path> find_registry_dir(const RegistryDirInputs& inputs);

// The source tree's registry/ as compiled in (CVM_SOURCE_REGISTRY_DIR); empty when unknown.
std::filesystem::path source_tree_registry_dir();

// find_registry_dir with this process's environment and executable. Throws RegistryError
// listing the places tried when none holds a registry.
std::filesystem::path locate_registry_dir();

// A table beside cuda.toml in the registry folder (`name`, e.g. "gpu_archs.toml"), else the copy
// compiled in (`embedded`; empty when there is none): its text and where it came from, for
// messages ("<embedded>/NAME" for the compiled-in copy).
std::pair<std::string, std::string> registry_table_text(const std::string& name, std::string_view embedded);

// load_registry(locate_registry_dir()), falling back to the embedded copy when no directory
// holds a registry and one was compiled in.
Registry load_default_registry();

// ---- CUDA ------------------------------------------------------------------------------------

// Releases whose version starts with `prefix` ("12", "11.2", "11.2.2"), oldest first.
std::vector<const CudaRelease*> find_cuda_releases(const Registry& reg, const Version& prefix);
// The newest release with that prefix, or nullptr.
const CudaRelease* find_cuda_release(const Registry& reg, const Version& prefix);

// Releases a toolkit assembled from components can be: those whose recorded cudart equals
// `cudart` (when given) and whose nvcc equals `nvcc` (when given). Releases that do not record
// a given component do not match. Oldest first; empty when neither is given.
std::vector<const CudaRelease*> find_cuda_by_components(const Registry& reg,
                                                        const std::optional<Version>& cudart,
                                                        const std::optional<Version>& nvcc);

// nvcc's build number where a toolkit release belongs: `nvcc --version` prints "release 11.8,
// V11.8.89", and 11.8.89 is the nvcc of the release 11.8.0. From 11.0 on NVIDIA numbers a
// toolkit MAJOR.MINOR.UPDATE with small updates (0 to 4 so far: 11.4.4), while nvcc's builds are
// numbered 20 and up (12.6.20 is the smallest this registry records); before 11.0 the toolkit
// took its nvcc's number (10.2.89 is a release).
inline constexpr unsigned kSmallestNvccBuild = 10; // an update number from here on is nvcc's build
struct NvccBuildNumber {
    std::string release;      // what to give instead: "11.8" (`cvm install 11.8` takes that release) or "12.4.0"
    bool known = false;       // the registry names the release that ships it; else the numbering says so
    bool minor_known = false; // (not known) the registry has a release of that minor
};
// When `v` (three numbers) is no release (of `reg`, when given) but nvcc's build number: the
// registry's release whose nvcc it is (the newest, where several updates ship one nvcc), else
// (11.0 and later) an update number of kSmallestNvccBuild or more. nullopt for what is, or may
// be, a release.
std::optional<NvccBuildNumber> nvcc_build_number(const Registry* reg, const Version& v);
// The line saying so, with what to run: "11.8.89 is nvcc's build number of CUDA 11.8; run
// `cvm install 11.8`" (`command` "cvm install", `rest` what follows the CUDA in a spec: "+9";
// `outcome`, when given, before what to run: "nothing written").
std::string nvcc_build_line(const Version& v, const NvccBuildNumber& b, const std::string& command,
                            const std::string& rest = "", const std::string& outcome = "");

enum class DriverRule {
    Toolkit,     // what the release itself asks for (Table 3 of the release notes)
    MinorCompat, // the floor for the whole major through minor-version compatibility
};

struct DriverRequirement {
    DriverVersion driver;
    const CudaRelease* release = nullptr; // the row it came from (Toolkit rule)
    bool inferred = false; // taken from another release of the same minor, or marked inferred
};

// Minimum driver for CUDA `cuda` (1 to 3 numbers; a prefix means its newest known release) on
// `platform`. A release without a recorded driver takes the one of the newest older release of
// the same minor (marked inferred). nullopt when nothing is known (e.g. Windows for 13.x, or
// minor-version compatibility before CUDA 11).
std::optional<DriverRequirement> minimum_driver(const Registry& reg, const Version& cuda,
                                                Platform platform, DriverRule rule);

// Parses "580.159.04" (2 to 4 numbers). nullopt when it is not a driver version.
std::optional<DriverVersion> parse_driver_version(std::string_view text);

// ---- cuDNN -----------------------------------------------------------------------------------

std::vector<const CudnnRelease*> find_cudnn_releases(const Registry& reg, const Version& prefix);
const CudnnRelease* find_cudnn_release(const Registry& reg, const Version& prefix);

struct CudnnBuildRef {
    const CudnnRelease* release = nullptr;
    const CudnnBuild* build = nullptr;
    std::string id() const; // "8.1.0.77-cuda11.2"
};

// The build with id "8.1.0.77-cuda11.2" / "8.9.7.29-cuda12". The version may be given with 3
// numbers ("8.9.7-cuda12"). nullopt when unknown.
std::optional<CudnnBuildRef> find_cudnn_build(const Registry& reg, std::string_view id);

// The CUDA minors a build supports, [min, max]; nullopt when the build is unknown.
std::optional<std::pair<Version, Version>> cudnn_supported_cuda(const Registry& reg,
                                                                std::string_view id);

// Whether `build` supports a toolkit of version `toolkit` (compared by major.minor).
bool cudnn_build_supports(const CudnnBuild& build, const Version& toolkit);

// All builds (of all releases) that support `toolkit`, oldest release first.
std::vector<CudnnBuildRef> cudnn_builds_for_cuda(const Registry& reg, const Version& toolkit);

// File name of one cuDNN library. `sub` empty means the main library: libcudnn.so.9 /
// cudnn64_9.dll; else libcudnn_ops.so.9 / cudnn_ops64_9.dll.
std::string cudnn_library_file(unsigned major, std::string_view sub, Platform platform);

// The complete library set of a major version on a platform, main library first. Empty when
// the registry does not know that major.
std::vector<std::string> cudnn_library_names(const Registry& reg, unsigned major,
                                             Platform platform);

// Name of the redist archive of a per-major (or 8.3/8.4 per-minor) build on an NVIDIA platform
// ("linux-x86_64", "windows-x86_64", ...): cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz.
std::string cudnn_redist_archive_name(const CudnnBuildRef& ref, std::string_view redist_platform);

// Whether `build` is the variant `--cuda CUDA` names ("12", "11.8"): the same major, and the
// same minor where both have one (a per-major build fits every minor of its major).
bool cudnn_build_is_for(const CudnnBuild& build, const Version& cuda);

// ---- How cvm gets a release ----------------------------------------------------------------

// Manifest: `cvm install` fetches it (NVIDIA's redistributable manifests). Archive: a cuDNN from
// before the manifests; `cvm install` fetches its archive from NVIDIA's public folder
// (install/legacy_cudnn.h). Installer: a
// CUDA from before the manifests (11.4.0); NVIDIA's installer, then `cvm import DIR`.
enum class Fetch { Manifest, Archive, Installer };
const char* fetch_name(Fetch how); // "manifest", "archive", "installer"
Fetch how_fetched(const CudaRelease& release);
Fetch how_fetched(const CudnnRelease& release);

// ---- Frameworks ------------------------------------------------------------------------------

// The entry of framework `name` ("pytorch", "tensorflow"; case-insensitive, "torch" is an alias
// of pytorch) for version `version` ("2.1.2" finds the 2.1 entry). nullptr when unknown.
const FrameworkRelease* find_framework(const Registry& reg, std::string_view name,
                                       const Version& version);
// A framework's name as the registry keys it, compared as pip compares names (case, '_' and '.'
// as '-', extras dropped): torch, pytorch, pytorch-gpu give "pytorch"; tensorflow,
// tensorflow-gpu, tensorflow[and-cuda] give "tensorflow"; jax, jaxlib give "jax"; another name
// itself, so normalised.
std::string framework_key(std::string_view name);
std::vector<const FrameworkRelease*> framework_releases(const Registry& reg, std::string_view name);

// The build of a framework release for a CUDA version (matched by major.minor), or for a PyTorch
// tag ("cu121"). nullptr when none.
const FrameworkBuild* find_framework_build(const FrameworkRelease& release, const Version& cuda);
const FrameworkBuild* find_framework_build(const FrameworkRelease& release, std::string_view tag);

} // namespace cvm::registry
