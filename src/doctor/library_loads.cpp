#include "library_loads.h"

#include "diagnose_support.h"
#include "file_system_view.h"
#include "linux_loader.h"
#include "windows_loader.h"

#include "binary/elf_reader.h"
#include "platform/platform.h"
#include "registry/registry.h"

#include <optional>
#include <set>
#include <utility>

namespace cvm::doctor {

namespace {

using Os = platform::Os;

TargetOs target_of(const DoctorInputs& in) {
    return in.os == Os::Windows ? TargetOs::windows : TargetOs::linux_gnu;
}

// "libcudnn_ops.so.9" and "cudnn_ops64_9.dll" give "cudnn_ops"; "cudnn64_9.dll" gives "cudnn".
std::string role_of(const std::string& file) {
    std::string s = file;
    if (s.rfind("lib", 0) == 0) s = s.substr(3);
    s = s.substr(0, s.find('.'));
    const auto bits = s.rfind("64_");
    if (bits != std::string::npos) s = s.substr(0, bits);
    return s;
}

// libnccl.so.2 (Linux only: NVIDIA publishes no NCCL for Windows): the selection's, or
// whichever a program would find, shown when found.
void nccl_set(const DoctorInputs& in, std::vector<LibrarySet>& sets, bool selected) {
    if (in.os != Os::Linux) return;
    sets.push_back({"nccl", {{"nccl", "libnccl.so.2", true}}, !selected});
}

std::vector<LibraryName> cudnn_names(const DoctorInputs& in, unsigned major) {
    auto names = cudnn_libraries(static_cast<int>(major), target_of(in));
    // The registry's library set, when it knows the major, is the reference.
    if (in.registry) {
        auto files = registry::cudnn_library_names(
            *in.registry, major,
            in.os == Os::Windows ? registry::Platform::Windows : registry::Platform::Linux);
        if (!files.empty()) {
            std::vector<LibraryName> out;
            for (std::size_t i = 0; i < files.size(); ++i)
                out.push_back({role_of(files[i]), files[i], i == 0});
            return out;
        }
    }
    return names;
}

bool in_selection(const DoctorInputs& in, const LibraryLoad& l) {
    for (const auto& dir : in.selection_dirs) {
        if (l.path && is_under(*l.path, dir, in.os)) return true;
        if (l.real_path && is_under(*l.real_path, dir, in.os)) return true;
    }
    return false;
}

LibraryLoad base_row(const Scenario& sc, const LibraryName& lib) {
    LibraryLoad l;
    l.scenario = sc.name;
    l.role = lib.role;
    l.name = lib.file;
    l.main = lib.main;
    return l;
}

// What a search (Linux's or Windows', whose results have the same fields) tried, and where none
// was chosen, the one it stopped at.
template <class Search> void take_candidates(LibraryLoad& l, const Search& r) {
    for (const auto& cand : r.candidates)
        l.candidates.push_back(
            {cand.path, to_string(cand.mechanism), to_string(cand.status), cand.detail});
    if (!r.selected() && r.failed_at) {
        const auto& bad = r.candidates[*r.failed_at];
        l.failure = bad.path + ": " + bad.detail;
        l.mechanism = to_string(bad.mechanism);
    }
}

LibraryLoad load_linux(const DoctorInputs& in, const Scenario& sc, const LibraryName& lib,
                       const std::optional<LinuxRequester>& requester) {
    const FileSystemView& files = *in.fs;
    LinuxSearchConfig c;
    if (requester) c.requesters = {*requester};
    c.ld_library_path = env_get(sc.env, "LD_LIBRARY_PATH", in.os);
    c.cache = in.ld_cache;
    c.cache_path = in.ld_cache_path;
    c.default_dirs = in.linux_default_dirs;
    c.abi = in.linux_abi;
    if (!in.cwd.empty()) c.current_dir = in.cwd;
    auto r = search_linux_library(lib.file, c, files);
    LibraryLoad l = base_row(sc, lib);
    take_candidates(l, r);
    if (const auto* w = r.selected()) {
        l.path = w->path;
        l.real_path = w->real_path;
        l.mechanism = to_string(w->mechanism);
        l.origin = w->origin;
        if (auto v = linux_library_version(w->path, files)) l.version = v->version;
    }
    // Another name for the winner or for a file already listed (/lib -> /usr/lib) is no
    // second copy.
    std::set<std::string> listed;
    if (l.real_path) listed.insert(*l.real_path);
    for (const auto* s : r.shadowed())
        if (listed.insert(s->real_path.value_or(s->path)).second) l.shadowed.push_back(s->path);
    if (l.path) l.from_selection = in_selection(in, l);
    return l;
}

WindowsSearchConfig windows_config(const DoctorInputs& in, const Scenario& sc,
                                   WindowsSearchMode mode) {
    WindowsSearchConfig c;
    c.mode = mode;
    c.system32_dir = in.windows.system32_dir;
    c.system16_dir = in.windows.system16_dir;
    c.windows_dir = in.windows.windows_dir;
    c.current_dir = in.cwd;
    c.path = env_get(sc.env, "PATH", in.os);
    c.machine = 0x8664;
    return c;
}

LibraryLoad load_windows(const DoctorInputs& in, const Scenario& sc, const LibraryName& lib,
                         WindowsSearchMode mode) {
    const FileSystemView& files = *in.fs;
    auto r = search_windows_dll(lib.file, windows_config(in, sc, mode), files);
    LibraryLoad l = base_row(sc, lib);
    take_candidates(l, r);
    if (const auto* w = r.selected()) {
        l.path = w->path;
        l.real_path = files.real_path(w->path);
        l.mechanism = to_string(w->mechanism);
        l.origin = w->origin;
        if (auto v = dll_file_version(w->path, files)) l.version = v->str();
    }
    for (const auto* s : r.shadowed())
        l.shadowed.push_back(s->path);
    if (l.path) l.from_selection = in_selection(in, l);
    return l;
}

} // namespace

std::vector<LibrarySet> library_sets(const DoctorInputs& in) {
    std::vector<LibrarySet> sets;
    const TargetOs target = target_of(in);
    // cuDNN the selection does not name: whichever major a program would find.
    auto any_cudnn = [&] {
        for (unsigned m : {9u, 8u, 7u})
            sets.push_back({"cudnn", cudnn_names(in, m), true});
    };
    if (in.resolved) {
        const Entry& tk = in.resolved->toolkit;
        const int major = static_cast<int>(tk.version.major());
        const int minor = static_cast<int>(tk.version.minor());
        if (in.resolved->cudnn)
            sets.push_back({"cudnn", cudnn_names(in, in.resolved->cudnn->version.major()), false});
        else // a toolkit alone: programs still load whatever cuDNN the machine gives them
            any_cudnn();
        sets.push_back({"cudart", {cudart_library(major, minor, target)}, false});
        sets.push_back({"cublas", cublas_libraries(major, minor, target), false});
        nccl_set(in, sets, in.resolved->nccl.has_value());
        return sets;
    }
    any_cudnn();
    for (int m : {13, 12, 11})
        sets.push_back({"cudart", {cudart_library(m, 0, target)}, true});
    nccl_set(in, sets, false);
    return sets;
}

std::vector<LibraryLoad> load_set(const DoctorInputs& in, const Scenario& sc,
                                  const LibrarySet& set) {
    std::vector<LibraryLoad> out;
    std::optional<LinuxRequester> main_requester;
    for (const auto& lib : set.names) {
        LibraryLoad l = in.os == Os::Windows
                            ? load_windows(in, sc, lib, WindowsSearchMode::standard)
                            : load_linux(in, sc, lib, main_requester);
        l.family = set.family;
        if (lib.main && l.path && in.os != Os::Windows) {
            // cuDNN dlopens its sub-libraries: its own RUNPATH ($ORIGIN in the wheels) counts.
            if (auto src = in.fs->open(*l.path)) {
                if (auto elf = binary::read_elf(*src))
                    main_requester = linux_requester(*l.path, *elf.info);
            }
        }
        out.push_back(std::move(l));
    }
    return out;
}

} // namespace cvm::doctor
