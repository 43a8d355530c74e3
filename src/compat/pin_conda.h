#pragma once
// Conda dependencies as project pins (compat/project_pins.h), shared by environment.yml and
// pixi.toml: a dependency's name, version spec and build string, the CUDA a build string or a
// pytorch-cuda pin names, and how pytorch-cuda=X reaches a file's torch pins.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compat/project_pins.h"

namespace cvm::compat {

// A conda dependency ("pytorch=2.4.1", "pytorch::pytorch >=2.4",
// "pytorch=2.4.1=py3.11_cuda12.1_0"): its name, version spec and build string.
struct CondaDep {
    std::string name, version, build;
};

CondaDep conda_dep(std::string_view s);

// A file's pytorch-cuda=X: its CUDA and the line that names it.
using CondaCuda = std::optional<std::pair<Version, unsigned>>;

// Adds the pin of one conda dependency; a pytorch-cuda pin sets `cuda` (with its line).
void add_conda_dep(std::vector<ProjectPin>& out, std::string_view text, const CondaDep& d,
                   const std::string& file, unsigned line, CondaCuda& cuda);

// pytorch-cuda=X of a file: the CUDA of its pytorch pins, or a pin of any torch built for it.
void apply_conda_cuda(std::vector<ProjectPin>& pins, const CondaCuda& cuda,
                      const std::string& file);

} // namespace cvm::compat
