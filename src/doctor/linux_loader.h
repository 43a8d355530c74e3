#pragma once
// Emulation of glibc ld.so's search for a library name (dlopen or DT_NEEDED), as a pure
// function of its inputs: the requesting objects' DT_RPATH / DT_RUNPATH, LD_LIBRARY_PATH, the
// ld.so.cache and the default folders. It lists every candidate in search order with the
// mechanism that produced it, the one that wins, and the ones the winner shadows.
//
// The order (glibc elf/dl-load.c, _dl_map_object):
//   1. a name with a '/' is opened as it is;
//   2. DT_RPATH of the requesting object, then of the object that loaded it, up to the main
//      program - all skipped when the requesting object has DT_RUNPATH (and an object with
//      both ignores its own DT_RPATH);
//   3. LD_LIBRARY_PATH (not for set-user-ID programs);
//   4. DT_RUNPATH of the requesting object only (it does not reach that object's dependencies);
//   5. /etc/ld.so.cache, then 6. the default folders - both skipped when the requesting object
//      has DF_1_NODEFLIB.
// A file of another ELF class or machine is skipped (ld.so goes on searching).

#include "binary/elf_reader.h"
#include "binary/ld_cache.h"
#include "file_system_view.h"

#include <optional>
#include <string>
#include <vector>

namespace cvm::doctor {

enum class LinuxMechanism { direct_path, rpath, ld_library_path, runpath, ld_cache, default_dir };
const char* to_string(LinuxMechanism m); // "DT_RPATH", "LD_LIBRARY_PATH", ...

enum class CandidateStatus {
    not_found,    // nothing at that path
    incompatible, // a file, but of another ELF class / machine / ABI: skipped by the loader
    unreadable,   // not a valid ELF file (a linker script, a truncated file): ld.so stops here
                  // with an error ("invalid ELF header") instead of searching on
    ignored,      // a second ld.so.cache entry for the name: ld.so only tries the first
    selected,     // the one that loads
    shadowed,     // a loadable file that comes after the selected one
    conditional,  // an ld.so.cache glibc-hwcaps entry: used instead only on CPUs with that level
};
const char* to_string(CandidateStatus s);

// An object in the chain that asks for the library: its path (for $ORIGIN) and search entries.
struct LinuxRequester {
    std::string path;
    std::optional<std::string> rpath;
    std::optional<std::string> runpath;
    bool nodeflib = false;
};
LinuxRequester linux_requester(const std::string& path, const binary::ElfInfo& info);

struct LinuxSearchConfig {
    // The requesting object first, then the object that loaded it, ..., the main program last.
    // Empty: a plain program without RPATH/RUNPATH asks.
    std::vector<LinuxRequester> requesters;
    std::optional<std::string> ld_library_path;  // the variable's value, if set
    bool secure = false;                         // set-user-ID: LD_LIBRARY_PATH is ignored
    const binary::LdCache* cache = nullptr;      // nullptr: no cache
    std::string cache_path = "/etc/ld.so.cache"; // named in the candidates' reasons
    std::vector<std::string> default_dirs;
    // The process's ABI; libraries of another class or machine are skipped. Unset: not checked.
    std::optional<binary::ElfInfo> abi;
    std::string lib_token = "lib/x86_64-linux-gnu"; // what $LIB expands to
    std::string platform_token = "x86_64";          // what $PLATFORM expands to
    std::string current_dir = ".";                  // for relative entries
};

struct LinuxCandidate {
    std::string path;
    LinuxMechanism mechanism = LinuxMechanism::default_dir;
    std::string
        origin; // which entry produced it: "DT_RUNPATH of /x/libfoo.so", "LD_LIBRARY_PATH"...
    CandidateStatus status = CandidateStatus::not_found;
    std::string detail;                   // why incompatible/unreadable, the cache entry's ABI, ...
    std::optional<std::string> real_path; // the file after symbolic links
};

struct LinuxSearchResult {
    std::string name;
    std::vector<LinuxCandidate> candidates; // in search order, each path once
    std::optional<std::size_t> winner;
    // Set when the search ends in an error at an unreadable candidate (no winner then).
    std::optional<std::size_t> failed_at;

    const LinuxCandidate* selected() const { return winner ? &candidates[*winner] : nullptr; }
    std::vector<const LinuxCandidate*> shadowed() const;
};

LinuxSearchResult search_linux_library(const std::string& name, const LinuxSearchConfig& config,
                                       const FileSystemView& fs);

// Expands $ORIGIN / ${ORIGIN}, $LIB, $PLATFORM in one RPATH/RUNPATH entry. `origin_dir` is the
// folder of the object that carries the entry. A '$' that starts no known token stays as it is;
// nullopt when a known token has no value (an empty origin): ld.so then drops the entry.
std::optional<std::string> expand_dynamic_string_tokens(const std::string& entry,
                                                        const std::string& origin_dir,
                                                        const std::string& lib_token,
                                                        const std::string& platform_token);

// glibc's built-in system folders for this ABI on this machine: the multiarch folders on
// Debian-style systems (when they exist), otherwise lib64 (64-bit) or lib (32-bit).
std::vector<std::string> default_linux_library_dirs(const binary::ElfInfo& abi,
                                                    const FileSystemView& fs);
// The Debian multiarch triplet of an ABI ("x86_64-linux-gnu"), empty when unknown.
std::string multiarch_triplet(const binary::ElfInfo& abi);

} // namespace cvm::doctor
