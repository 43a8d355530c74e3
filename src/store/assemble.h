#pragma once
// Assembled roots. A toolkit or cuDNN build whose files are scattered over shared folders
// (Debian's packages, a conda environment, pip wheels, a system cuDNN with versioned headers) is
// given a root of its own in the store, made only of links: bin/ with its programs, include/,
// lib64/ with its libraries, nvvm/libdevice. Everything downstream (shims, merged views, the
// environment, doctor) then sees an ordinary toolkit root, and no shared folder such as /usr/bin
// ever lands on PATH or becomes CUDA_HOME.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cvm {

namespace fs = std::filesystem;

// One link of an assembled root: `rel` ('/'-separated, inside the root) points at `target`.
struct RootLink {
    std::string rel;
    fs::path target;
};

// Links `rel` to the folder or file `target` as a whole. Nothing is added when it is missing.
void plan_link(std::vector<RootLink>& plan, const std::string& rel, const fs::path& target);

// Links every entry of `src_dir` whose file name `keep` accepts into the folder `rel_dir` of the
// root (one link per file, so a shared folder's other files stay out). An earlier link of the
// same name wins. Returns how many were added.
size_t plan_files(std::vector<RootLink>& plan, const std::string& rel_dir, const fs::path& src_dir,
                  const std::function<bool(const std::string&)>& keep);

// Links the entries of the folders `src_dirs` into the folder `rel_dir` of the root ("" for the
// root itself) as their trees hold them, read off the folders: a name that `keep` accepts and only
// one of them has (or a file, the first's) is linked whole; a folder several have is merged, one
// level down, with everything below kept. For folders that are the component's own (a wheel's
// nvidia/cu13, nvidia/cuda_runtime); an earlier link of the same name wins.
void plan_tree(std::vector<RootLink>& plan, const std::string& rel_dir, const std::vector<fs::path>& src_dirs,
               const std::function<bool(const std::string&)>& keep);

// What packaging puts beside a component's own files (a wheel's __init__.py and __pycache__/),
// which no root holds.
bool is_packaging_file(const std::string& name);

// What keeps the folder `dir` from being linked into an assembled root as a whole: nullopt when
// every folder below it can be read and every link in it to a folder stays inside `source` (the
// folder the import names), else one line naming the folder. A root must hold what its source
// holds, not what a link leads to elsewhere.
std::optional<std::string> tree_problem(const fs::path& dir, const fs::path& source);

// Makes `stage` (a folder that must not exist yet) hold the links of `plan`. Throws
// std::runtime_error naming the link on failure.
void build_assembled_root(const fs::path& stage, const std::vector<RootLink>& plan);

} // namespace cvm
