#pragma once
// Assembled roots. A toolkit or cuDNN build whose files are scattered over shared folders
// (Debian's packages, a conda environment, pip wheels, a system cuDNN with versioned headers) is
// given a root of its own in the store, made only of links: bin/ with its programs, include/,
// lib64/ with its libraries, nvvm/libdevice. Everything downstream (shims, merged views, the
// environment, doctor) then sees an ordinary toolkit root, and no shared folder such as /usr/bin
// ever lands on PATH or becomes CUDA_HOME.
#include <filesystem>
#include <functional>
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

// Makes `stage` (a folder that must not exist yet) hold the links of `plan`. Throws
// std::runtime_error naming the link on failure.
void build_assembled_root(const fs::path& stage, const std::vector<RootLink>& plan);

} // namespace cvm
