#pragma once
// The solver's steps over the toolkits the frameworks allow (solver.cpp lists them): the
// machine's constraints in their order (the driver, the GPUs, the host compilers, which never
// refuse one, and the cuDNN), each dropping the toolkits it rules out and adding a line of why
// to those it keeps, then their ranking.
#include <optional>
#include <string>
#include <vector>

#include "compat/solver_facts.h"
#include "spec/spec.h"
#include "registry/registry.h"

namespace cvm::compat {

// "a, b, c", and "CUDA 11.8, 12.1": the lists in the reasons' lines.
std::string join(const std::vector<std::string>& parts, const std::string& sep = ", ");
std::string minors_text(const std::vector<Version>& minors);

// One toolkit the frameworks allow, as the constraints judge it.
struct Candidate {
    Version toolkit;
    bool installed = false;
    std::optional<Version> cudnn_prefix;
    std::optional<CudnnId> cudnn;
    bool cudnn_installed = false;
    bool driver_full =
        true; // meets the toolkit's own minimum, not only minor-version compatibility
    bool gpu_native = true;
    bool compiler_fits = true; // an installed host compiler nvcc accepts (or cvm cannot tell)
    std::vector<Reason> reasons;
    bool own_cudnn = false; // c.cudnn is the framework's own wheel
};

// A constraint that leaves no toolkit, and the line saying why.
struct RuledOut {
    Constraint constraint;
    std::string why;
};

// Each step keeps the candidates that pass, or returns what ruled out the last of them; a check
// it skips (no driver, no GPU seen) adds a line to `notes`. `minors` and `labels` are what the
// frameworks allow and their names ("tensorflow==2.10 and torch==2.1"), for the messages.
std::optional<RuledOut> apply_driver(std::vector<Candidate>& cands, const MachineFacts& machine,
                                     const registry::Registry& reg,
                                     const std::vector<Version>& minors, const std::string& labels,
                                     std::vector<std::string>& notes);
std::optional<RuledOut> apply_gpus(std::vector<Candidate>& cands, const MachineFacts& machine,
                                   const Knowledge& know, std::vector<std::string>& notes);
// Never refuses one: a toolkit without an installed host compiler its nvcc accepts gets a note.
void note_host_compilers(std::vector<Candidate>& cands, const MachineFacts& machine,
                         const Knowledge& know, std::vector<std::string>& notes);
// `own_cudnn`: the cuDNN wheel of the framework whose own wheels a pick selects, if any.
std::optional<RuledOut> choose_cudnn(std::vector<Candidate>& cands, const MachineFacts& machine,
                                     const registry::Registry& reg,
                                     const std::optional<CudnnId>& own_cudnn,
                                     const std::string& labels);
// The choice first: what is installed, then what runs without compromise, then the newest.
void rank_candidates(std::vector<Candidate>& cands);

} // namespace cvm::compat
