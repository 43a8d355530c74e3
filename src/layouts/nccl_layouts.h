#pragma once
// The layouts an NCCL is found in on a machine, and the store entry each becomes:
//  - a folder of its own: NVIDIA's archive extracted (nccl_2.21.5-1+cuda12.4_x86_64/ with
//    include/nccl.h and lib/libnccl.so.2), a wheel's nvidia/nccl; its lib/ is then NCCL's alone;
//  - the same reached from above: a wheel's site-packages or its nvidia/ folder, the folder an
//    archive was extracted into;
//  - folders shared with other libraries: NVIDIA's apt packages libnccl2/libnccl-dev
//    (/usr/lib/<multiarch>/libnccl.so.2.X.Y, /usr/include/nccl.h), a conda environment, a
//    toolkit folder NCCL was copied into. These get an assembled root of links to NCCL's own
//    files (assemble.h), so no shared folder lands on LD_LIBRARY_PATH or becomes NCCL_HOME.
// The version and the CUDA it was built for come from the library itself (its text "NCCL version
// 2.21.5+cuda12.4", binary/nccl_version.h), never from a file name alone.
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "store/assemble.h"
#include "spec/spec.h"
#include "store/store.h"
#include "platform/platform.h"

namespace cvm {

namespace fs = std::filesystem;

// The folder holds an NCCL whose identity cannot be told, or --cuda contradicts it; what() is
// one line naming the folder and what to run.
class NcclImportError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};
class NcclCudaConflict : public NcclImportError {
public:
    using NcclImportError::NcclImportError;
};

struct NcclImport {
    Entry entry;                // kind, id, version, cuda, path or origin, dirs, note, stamp
    std::vector<RootLink> plan; // empty when the folder is NCCL's own
    std::string warning;        // e.g. nccl.h of another release; also in entry.note
};

// The NCCL `dir` holds, in any layout above; nullopt when it holds none (and always on Windows,
// where NVIDIA publishes no NCCL). `cuda_override` is --cuda: used when the library does not say
// its CUDA, refused (NcclCudaConflict) when it says another major.
std::optional<NcclImport> nccl_import_of(const fs::path& dir, platform::Os os,
                                         const std::optional<Version>& cuda_override);

// An installed NCCL package from dpkg's status file ("Package: libnccl2",
// "Version: 2.21.5-1+cuda12.4").
struct DpkgNccl {
    std::string package; // "libnccl2"
    Version version;     // 2.21.5
    Version cuda;        // 12.4; empty when the version does not say
};
std::vector<DpkgNccl> nccl_packages_from_dpkg_status(std::string_view text);

// "nccl_2.21.5-1+cuda12.4_x86_64" (an archive or its folder, extension ignored) and
// "nvidia_nccl_cu12-2.21.5" (a wheel or its dist-info): what the name says. The version from a
// name is only ever compared with the library's own.
struct NcclNameInfo {
    Version version;
    std::optional<Version> cuda;
    std::string platform; // "linux-x86_64", "linux-sbsa"; "" when the name does not say
};
std::optional<NcclNameInfo> nccl_info_from_name(std::string_view name);

// Whether `usr` holds NVIDIA's NCCL packages (libnccl.so.2 in lib/<multiarch>), for discovery.
bool has_system_nccl(const fs::path& usr);

// The NCCL library file in `lib_dir` (libnccl.so.2 with its links followed); empty when none.
fs::path nccl_library_in(const fs::path& lib_dir);

} // namespace cvm
