#pragma once
// An entry of the store: which component it is (Kind: the store's folder and the word of specs
// and commands) and what it holds (Entry). Below the store and the trust checks of an entry
// (entry_trust.h), which both speak of entries; the entry file is entry_format.h's and the
// store is store.h's.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/spec.h"

namespace cvm {

namespace fs = std::filesystem;

enum class Kind { Cuda, Cudnn, Nccl };
const char*
kind_dir(Kind k); // "cuda" / "cudnn" / "nccl": the store folder, and the word of specs and commands
const char* kind_label(Kind k); // "CUDA" / "cuDNN" / "NCCL", for people
std::optional<Kind> kind_of_dir(std::string_view word);
// Every kind, in the order cvm resolves, lists and records them. Code that handles each
// component of a combination loops over this (and Resolved::entries), so a new one is one more
// row, not one more branch.
const std::vector<Kind>& all_kinds();

// What an entry id of `kind` says: the release, and for cuDNN and NCCL the CUDA it was built for
// (12.4.1; 9.1.0.70-cuda12; 2.21.5-cuda12.4). None when `id` is not an id of that kind.
struct EntryIdParts {
    Version version;
    Version cuda; // empty for a toolkit
};
std::optional<EntryIdParts> parse_entry_id(Kind kind, std::string_view id);

struct ArchiveRecord {
    std::string name;       // component or file name
    std::string url;        // where it came from ("" when unknown)
    std::string sha256;     // of the archive
    bool first_use = false; // no public source gives the sum: trusted on first use
};

struct Entry {
    Kind kind = Kind::Cuda;
    std::string id;  // "11.2.2" or "8.1.0.77-cuda11.2"
    Version version; // toolkit version, or cuDNN version
    Version cuda;    // cuDNN and NCCL: the CUDA it was built for
    fs::path path;   // where the files are (absolute)
    bool imported = false;
    // Imported from scattered folders (assemble.h): where the files really are; `path` is then
    // the entry's assembled root of links, <entry dir>/root.
    fs::path origin;
    std::vector<std::string> include_dirs; // relative to path, '/' separated
    std::vector<std::string> lib_dirs;
    std::vector<std::string> bin_dirs;
    std::vector<std::string> components;
    std::vector<ArchiveRecord> archives;
    std::string platform; // "linux-x86_64", "windows-x86_64", ...
    std::string note;     // free text (e.g. how the version was found)
    // Imported only: source_stamp() of the file that gave the version (or of the main
    // library), so `cvm list` can tell when the folder changed under the entry.
    std::string stamp;

    // Set when read from a store:
    size_t layer = 0;   // 0 = the writable layer
    fs::path entry_dir; // <layer>/<kind>/<id>

    std::optional<CudnnId> cudnn_id() const;
    std::optional<NcclId> nccl_id() const;
};

} // namespace cvm
