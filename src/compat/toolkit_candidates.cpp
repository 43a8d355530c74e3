#include "compat/toolkit_candidates.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "compat/auto_host_compiler.h"
#include "compat/compiler_id.h"
#include "compat/gpu_arch.h"
#include "compat/host_compiler_limits.h"
#include "spec/spec_match.h"
#include "platform/platform.h"

namespace cvm::compat {

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
    std::string out;
    for (const auto& p : parts)
        out += (out.empty() ? "" : sep) + p;
    return out;
}

std::string minors_text(const std::vector<Version>& minors) {
    std::vector<std::string> s;
    for (const auto& m : minors)
        s.push_back(m.str());
    return "CUDA " + join(s);
}

namespace {

using registry::Platform;

bool driver_older(const registry::DriverVersion& have, const registry::DriverVersion& need) {
    return have.value < need.value;
}

// Applies one constraint: `check` returns "" to keep a candidate (after adding its line) or
// why it is out. When none is left, the constraint rules everything out, with the last why.
template <typename Check>
std::optional<RuledOut> keep_candidates(std::vector<Candidate>& cands, Constraint c, Check check) {
    std::vector<Candidate> kept;
    std::string last_why;
    for (auto& cand : cands) {
        std::string why = check(cand);
        if (why.empty())
            kept.push_back(std::move(cand));
        else
            last_why = why;
    }
    if (kept.empty()) return RuledOut{c, last_why};
    cands = std::move(kept);
    return std::nullopt;
}

// Whether CUDA `c.toolkit` builds for every GPU: "" with its line added, or why it is out (one
// that only JIT-compiles an older PTX is kept, and taken last).
std::string judge_gpus(Candidate& c, const std::vector<Gpu>& gpus,
                       const std::vector<GpuArchRow>& archs) {
    const GpuArchRow* row = arch_row(archs, c.toolkit);
    if (!row) {
        c.reasons.push_back({Constraint::Gpu, "GPU: cvm does not know which architectures CUDA " +
                                                  c.toolkit.str() + " builds for; not checked"});
        return {};
    }
    std::vector<std::string> fine, slow;
    for (const auto& g : gpus) {
        ArchJudgement j = judge_arch(*row, g, archs);
        if (j.support == ArchSupport::None) return j.message;
        if (j.support == ArchSupport::PtxJit)
            slow.push_back(j.message);
        else if (std::find(fine.begin(), fine.end(),
                           "sm_" + std::to_string(g.cc) + " (" + g.name + ")") == fine.end())
            fine.push_back("sm_" + std::to_string(g.cc) + " (" + g.name + ")");
    }
    if (!slow.empty()) {
        c.gpu_native = false;
        c.reasons.push_back({Constraint::Gpu, slow.front()});
    } else {
        c.reasons.push_back(
            {Constraint::Gpu, "GPU: CUDA " + c.toolkit.str() + " builds for " + join(fine)});
    }
    return {};
}

// The line about the installed host compilers for one candidate; compiler_fits false where none
// of them is one its nvcc accepts.
void judge_host_compilers(Candidate& c, const MachineFacts& machine, const Knowledge& know) {
    const bool windows = machine.platform == Platform::Windows;
    const HostCompilerLimits* limits = nullptr;
    if (auto it = machine.toolkit_limits.find(c.toolkit.str()); it != machine.toolkit_limits.end())
        limits = &it->second;
    else if (know.compilers)
        limits = limits_for(*know.compilers, c.toolkit);
    if (!limits) {
        c.reasons.push_back(
            {Constraint::HostCompiler, "host compiler: cvm does not know which ones CUDA " +
                                           c.toolkit.str() + " accepts; not checked"});
        return;
    }
    std::vector<std::string> seen;
    bool unknown = false;
    for (const auto& id : machine.compilers) {
        Verdict v = judge(*limits, id);
        if (v == Verdict::Supported) {
            c.reasons.push_back({Constraint::HostCompiler, "host compiler: " + describe(id) +
                                                               " is one CUDA " + c.toolkit.str() +
                                                               " accepts (" +
                                                               limits->describe(windows) + ")"});
            return;
        }
        unknown = unknown || v == Verdict::Unknown;
        seen.push_back(describe(id));
    }
    if (unknown) {
        c.reasons.push_back(
            {Constraint::HostCompiler, "host compiler: cvm cannot tell whether CUDA " +
                                           c.toolkit.str() + " accepts " + join(seen)});
        return;
    }
    c.compiler_fits = false;
    c.reasons.push_back(
        {Constraint::HostCompiler,
         "note: no installed host compiler is one CUDA " + c.toolkit.str() +
             " accepts (installed: " + join(seen) + "; it takes " + limits->describe(windows) +
             "): the framework's wheels need none; to build CUDA code with nvcc, " +
             host_compiler_fix(*limits, windows ? platform::Os::Windows : platform::Os::Linux,
                               machine.packaged)});
}

// The cuDNN for one candidate: the framework's own wheel where it fits, else the newest
// installed build of the cuDNN the frameworks were tested with, else the newest in the
// registry; "" when found (or none is wanted), or why the candidate is out.
std::string pick_cudnn(Candidate& c, const MachineFacts& machine, const registry::Registry& reg,
                       const std::optional<CudnnId>& own_cudnn, const std::string& labels) {
    // The cuDNN part a spec would have: what the frameworks were tested with, if anything.
    Spec wanted;
    wanted.cudnn = c.cudnn_prefix ? *c.cudnn_prefix : Version{};
    // The framework's own cuDNN wheel, where it serves the toolkit and suits what any
    // other framework was tested with.
    if (own_cudnn && cudnn_fits(wanted, *own_cudnn, c.toolkit)) {
        c.cudnn = *own_cudnn;
        c.cudnn_installed = true;
        c.own_cudnn = true;
        return {};
    }
    if (!c.cudnn_prefix) return {};
    for (const auto& id : machine.cudnn)
        if (cudnn_fits(wanted, id, c.toolkit) && (!c.cudnn || c.cudnn->version < id.version)) {
            c.cudnn = id;
            c.cudnn_installed = true;
        }
    if (!c.cudnn) {
        auto rels = registry::find_cudnn_releases(reg, *c.cudnn_prefix);
        for (auto it = rels.rbegin(); it != rels.rend() && !c.cudnn; ++it)
            for (const auto& b : (*it)->builds)
                if (registry::cudnn_build_supports(b, c.toolkit)) {
                    c.cudnn = CudnnId{(*it)->version, b.cuda};
                    break;
                }
    }
    if (!c.cudnn)
        return "no cuDNN " + c.cudnn_prefix->str() + " build for CUDA " + c.toolkit.str() +
               " is installed or in cvm's registry (" + labels + " was tested with cuDNN " +
               c.cudnn_prefix->str() + ")";
    return {};
}

} // namespace

// The driver: the toolkit's own minimum, or at least the minor-version compatibility floor.
std::optional<RuledOut> apply_driver(std::vector<Candidate>& cands, const MachineFacts& machine,
                                     const registry::Registry& reg,
                                     const std::vector<Version>& minors, const std::string& labels,
                                     std::vector<std::string>& notes) {
    const char* plat = registry::platform_name(machine.platform);
    if (!machine.driver) {
        notes.push_back(
            "no NVIDIA driver found: the driver check is skipped (fine on a build or CI machine; "
            "running programs needs one)");
        return std::nullopt;
    }
    const auto& have = *machine.driver;
    std::optional<registry::DriverVersion> lowest_need;
    auto out = keep_candidates(cands, Constraint::Driver, [&](Candidate& c) -> std::string {
        auto own = registry::minimum_driver(reg, c.toolkit, machine.platform,
                                            registry::DriverRule::Toolkit);
        auto compat = registry::minimum_driver(reg, c.toolkit, machine.platform,
                                               registry::DriverRule::MinorCompat);
        std::optional<registry::DriverVersion> hard;
        if (own) hard = own->driver;
        if (compat && (!hard || driver_older(compat->driver, *hard))) hard = compat->driver;
        const std::string cuda = "CUDA " + c.toolkit.str();
        if (!hard) {
            c.reasons.push_back(
                {Constraint::Driver, "driver " + have.text + ": cvm knows no minimum driver of " +
                                         cuda + " on " + plat + ", so it is not checked"});
            return {};
        }
        if (driver_older(have, *hard)) {
            if (!lowest_need || driver_older(*hard, *lowest_need)) lowest_need = hard;
            return "too old";
        }
        if (own && driver_older(have, own->driver)) {
            c.driver_full = false;
            c.reasons.push_back(
                {Constraint::Driver,
                 "driver " + have.text + " is older than " + cuda + "'s minimum " +
                     own->driver.text + ": it runs through minor-version compatibility (" +
                     hard->text + " or newer), without JIT compilation of newer PTX"});
        } else {
            c.reasons.push_back(
                {Constraint::Driver, "driver " + have.text + " runs " + cuda + " (it needs " +
                                         (own ? own->driver.text : hard->text) + " or newer)"});
        }
        return {};
    });
    if (!out) return std::nullopt;
    return RuledOut{Constraint::Driver,
                    "driver " + have.text + " is too old for " + minors_text(minors) + " (as " +
                        labels + " needs): the oldest of them needs " + lowest_need->text +
                        " or newer; update the NVIDIA driver"};
}

// The GPUs: a toolkit that cannot build for one is out.
std::optional<RuledOut> apply_gpus(std::vector<Candidate>& cands, const MachineFacts& machine,
                                   const Knowledge& know, std::vector<std::string>& notes) {
    if (machine.gpus.empty()) {
        notes.push_back("no GPU seen: the GPU architecture check is skipped");
        return std::nullopt;
    }
    if (!know.archs) {
        notes.push_back("cvm cannot read its table of GPU architectures: the GPU check is skipped");
        return std::nullopt;
    }
    return keep_candidates(cands, Constraint::Gpu,
                           [&](Candidate& c) { return judge_gpus(c, machine.gpus, *know.archs); });
}

// An installed host compiler nvcc accepts: never a reason to refuse, since frameworks from
// wheels need no nvcc; a toolkit with one that fits is taken first, and the others get a note
// with what to install for the builds that will need one (CUDA extensions).
void note_host_compilers(std::vector<Candidate>& cands, const MachineFacts& machine,
                         const Knowledge& know, std::vector<std::string>& notes) {
    if (machine.compilers.empty()) {
        notes.push_back(
            "no host compiler found: the framework's wheels need none, but nvcc cannot build here "
            "until one is installed");
        return;
    }
    for (auto& c : cands)
        judge_host_compilers(c, machine, know);
}

// The cuDNN the framework was tested with (TensorFlow); PyTorch brings its own.
std::optional<RuledOut> choose_cudnn(std::vector<Candidate>& cands, const MachineFacts& machine,
                                     const registry::Registry& reg,
                                     const std::optional<CudnnId>& own_cudnn,
                                     const std::string& labels) {
    return keep_candidates(cands, Constraint::Cudnn, [&](Candidate& c) {
        return pick_cudnn(c, machine, reg, own_cudnn, labels);
    });
}

void rank_candidates(std::vector<Candidate>& cands) {
    std::stable_sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
        auto key = [](const Candidate& c) {
            return std::make_tuple(c.installed, c.cudnn_installed || !c.cudnn_prefix, c.driver_full,
                                   c.gpu_native, c.compiler_fits);
        };
        if (key(a) != key(b)) return key(a) > key(b);
        return b.toolkit < a.toolkit;
    });
}

} // namespace cvm::compat
