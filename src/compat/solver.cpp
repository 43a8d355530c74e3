#include "compat/solver.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <tuple>
#include <variant>

#include "compat/auto_host_compiler.h"
#include "core/ascii.h"
#include "core/spec_match.h"
#include "core/suggest.h"

namespace cvm::compat {

namespace {

using registry::Platform;

Version major_minor(const Version& v) {
    return Version{{v.major(), v.minor()}};
}

std::string join(const std::vector<std::string>& parts, const std::string& sep = ", ") {
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

// What one framework allows: CUDA minors, each with the cuDNN it was tested with (TensorFlow).
struct Allowed {
    Version minor;
    std::optional<Version> cudnn;
};

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

struct Failed {
    Constraint constraint;
    std::string why;
};

// The CUDA minors (and cuDNN) one framework allows, with the line saying why; a Failed when none.
std::variant<std::vector<Allowed>, Failed> allowed_by(const FrameworkWant& w,
                                                      const registry::Registry& reg,
                                                      Platform platform,
                                                      std::vector<Reason>& lines) {
    const registry::FrameworkRelease* rel =
        w.version.empty() ? nullptr : registry::find_framework(reg, w.name, w.version);
    const bool torch = w.name == "pytorch";
    if (w.installed && !w.built_cuda)
        return Failed{
            Constraint::Framework,
            w.label + " is a CPU build (" +
                (torch ? "torch.version.cuda is None" : "its build_info.py names no CUDA") +
                "): there is no CUDA to match; install a CUDA build of it, or name a release: "
                "--for " +
                (torch ? "torch==" : "tensorflow==") + (rel ? rel->version.str() : "VERSION")};
    if (!torch && platform == Platform::Windows && rel && !rel->windows_gpu)
        return Failed{Constraint::Platform,
                      w.label +
                          " has no native Windows GPU build (TensorFlow's last is 2.10); run it "
                          "in WSL2, or use --for tensorflow==2.10"};
    std::vector<Allowed> out;
    if (w.built_cuda) {
        Allowed a{major_minor(*w.built_cuda), std::nullopt};
        if (!torch) {
            a.cudnn = w.built_cudnn;
            // build_info may say only "8": the registry's row of the release says which 8.x.
            if (rel)
                if (const auto* b = registry::find_framework_build(*rel, a.minor))
                    if (!a.cudnn || (b->cudnn.has_prefix(*a.cudnn) &&
                                     a.cudnn->parts.size() < b->cudnn.parts.size()))
                        a.cudnn = b->cudnn;
        }
        out.push_back(a);
        std::string from = w.installed ? (torch ? " (torch.version.cuda)" : " (its build_info.py)")
                           : w.cuda_source.empty() ? " (its +cu tag)"
                                                   : " (" + w.cuda_source + ")";
        if (torch)
            lines.push_back(
                {Constraint::Framework, w.label + " was built with CUDA " + a.minor.str() + from +
                                            ": CUDA extensions must be built with the same CUDA"});
        else
            lines.push_back({Constraint::Framework,
                             w.label + " was built with CUDA " + a.minor.str() +
                                 (a.cudnn ? " and cuDNN " + a.cudnn->str() : std::string()) +
                                 from});
        return out;
    }
    if (!rel)
        return Failed{Constraint::Framework,
                      w.label + ": cvm's registry does not know this release"};
    std::vector<Version> minors;
    for (const auto& b : rel->builds) {
        out.push_back({b.cuda, torch ? std::nullopt : std::optional<Version>(b.cudnn)});
        minors.push_back(b.cuda);
    }
    const std::string sourced = rel->confirmed ? "" : " (registry row marked inferred)";
    if (torch)
        lines.push_back({Constraint::Framework,
                         w.label + " ships builds for " + minors_text(minors) + sourced});
    else
        lines.push_back({Constraint::Framework,
                         w.label + " was tested with " + minors_text(minors) +
                             (out.front().cudnn ? " and cuDNN " + out.front().cudnn->str() : "") +
                             " (tensorflow.org's tested build configurations)" + sourced});
    return out;
}

// The framework whose own wheels a pick selects: the first that brings some. Two that bring
// different builds cannot both load their own under one selection (one cuDNN, one NCCL comes
// first on the library path): refused, naming both.
std::variant<const FrameworkWant*, Failed> own_wheels_of(const std::vector<FrameworkWant>& wants) {
    auto text = [](const auto& id) { return id ? id->str() : std::string("none"); };
    const FrameworkWant* own = nullptr;
    for (const auto& w : wants) {
        if (!w.own_cudnn_build && !w.own_nccl_build) continue;
        if (!own) {
            own = &w;
            continue;
        }
        if (text(own->own_cudnn_build) != text(w.own_cudnn_build) ||
            text(own->own_nccl_build) != text(w.own_nccl_build))
            return Failed{Constraint::Cudnn,
                          own->label + " brings cuDNN " + text(own->own_cudnn_build) +
                              " and NCCL " + text(own->own_nccl_build) + ", " + w.label +
                              " brings cuDNN " + text(w.own_cudnn_build) + " and NCCL " +
                              text(w.own_nccl_build) +
                              ": one selection puts one of each first on the library path; run "
                              "`cvm use --for .` with a Python that has one of them"};
    }
    return own;
}

// The line saying that the framework's own wheels are selected, and why.
Reason own_wheels_line(const FrameworkWant& w, const std::optional<CudnnId>& cudnn,
                       const std::optional<NcclId>& nccl) {
    std::string what, where;
    if (cudnn) {
        what = "cuDNN " + cudnn->str();
        where = w.own_cudnn_folder;
    }
    if (nccl) {
        what += (what.empty() ? "" : " and ") + std::string("NCCL ") + nccl->str();
        where += (where.empty() ? "" : ", ") + w.own_nccl_folder;
    }
    return {Constraint::Cudnn,
            what + ": the own wheels of " + w.label + " (" + where +
                "), imported and selected: cvm puts the selection's cuDNN and NCCL first on the "
                "library path, so with the framework's own builds there it loads what it loads "
                "without cvm (another release there would mix with its own or be refused)"};
}

bool driver_older(const registry::DriverVersion& have, const registry::DriverVersion& need) {
    return have.value < need.value;
}

} // namespace

const char* constraint_name(Constraint c) {
    switch (c) {
    case Constraint::Framework:
        return "framework";
    case Constraint::Platform:
        return "platform";
    case Constraint::Driver:
        return "driver";
    case Constraint::Gpu:
        return "gpu";
    case Constraint::HostCompiler:
        return "host_compiler";
    case Constraint::Cudnn:
        return "cudnn";
    }
    return "framework";
}

const char* constraint_words(Constraint c) {
    switch (c) {
    case Constraint::Gpu:
        return "GPU";
    case Constraint::HostCompiler:
        return "host compiler";
    case Constraint::Cudnn:
        return "cuDNN";
    default:
        return constraint_name(c);
    }
}

Spec Pick::spec() const {
    Spec s;
    s.cuda = toolkit;
    if (cudnn) s.cudnn = cudnn->version;
    if (cudnn && own_builds) s.cudnn_cuda = cudnn->cuda;
    if (nccl) {
        s.nccl = nccl->version;
        s.nccl_cuda = nccl->cuda;
    }
    return s;
}

FrameworkWant parse_framework_want(const registry::Registry& reg, const std::string& text) {
    std::string name = text, version;
    if (auto eq = text.find("=="); eq != std::string::npos) {
        name = text.substr(0, eq);
        version = text.substr(eq + 2);
        if (version.empty())
            throw FrameworkInputError(printable(text) + ": no version after ==; e.g. --for " +
                                      name + "==2.5");
    } else if (text.find_first_of("=<>~!") != std::string::npos) {
        throw FrameworkInputError(printable(text) +
                                  ": write NAME==VERSION (e.g. tensorflow==2.10), or . for the "
                                  "frameworks of the active Python");
    }
    std::string key = registry::framework_key(name);
    if (registry::framework_releases(reg, key).empty()) {
        auto near = closest_match(key, {"torch", "pytorch", "tensorflow"});
        throw FrameworkInputError(
            "unknown framework " + printable(name) + (near ? "; did you mean " + *near + "?" : "") +
            " (cvm knows torch (pytorch) and tensorflow; . means the frameworks of the "
            "active Python)");
    }
    auto releases = registry::framework_releases(reg, key);
    FrameworkWant w;
    w.name = releases.front()->name;
    const std::string shown = w.name == "pytorch" ? "torch" : w.name;
    std::string tag;
    if (auto plus = version.find('+'); plus != std::string::npos) {
        tag = ascii_lower(version.substr(plus + 1));
        version.resize(plus);
    }
    if (version.empty()) {
        w.version = releases.back()->version;
    } else {
        auto v = parse_version(version, 1, 4);
        if (!v)
            throw FrameworkInputError(printable(text) + ": " + printable(version) +
                                      " is not a version (e.g. 2.10)");
        w.version = *v;
    }
    const registry::FrameworkRelease* rel = registry::find_framework(reg, w.name, w.version);
    if (!rel) {
        std::vector<std::string> known, near_first;
        for (const auto* r : releases)
            known.push_back(r->version.str());
        // "2.50" means 2.5 rather than 2.0: releases sharing the typed text's start come first.
        for (const auto& k : known)
            if (w.version.str().rfind(k, 0) == 0 || k.rfind(w.version.str(), 0) == 0)
                near_first.push_back(k);
        for (const auto& k : known)
            if (std::find(near_first.begin(), near_first.end(), k) == near_first.end())
                near_first.push_back(k);
        auto near = closest_match(w.version.str(), near_first);
        throw FrameworkInputError(shown + " " + w.version.str() + " is not in cvm's registry" +
                                  (near ? "; did you mean " + shown + "==" + *near + "?" : "") +
                                  " (it knows " + known.front() + " to " + known.back() +
                                  ": cvm list --available)");
    }
    if (!tag.empty()) {
        if (w.name != "pytorch" || tag.rfind("cu", 0) != 0)
            throw FrameworkInputError(printable(text) + ": +" + tag +
                                      " is not a CUDA build tag (torch's are like +cu124)");
        const registry::FrameworkBuild* b = registry::find_framework_build(*rel, tag);
        if (!b) {
            std::vector<std::string> tags;
            for (const auto& x : rel->builds)
                tags.push_back(x.tag);
            throw FrameworkInputError("torch " + rel->version.str() + " has no +" + tag +
                                      " build (it ships " + join(tags) + ")");
        }
        w.built_cuda = b->cuda;
    }
    w.label = version.empty() ? shown + " " + w.version.str() + " (the newest cvm knows)"
                              : shown + "==" + printable(text.substr(text.find("==") + 2));
    return w;
}

SolveResult solve(const std::vector<FrameworkWant>& wants, const MachineFacts& machine,
                  const Knowledge& know) {
    SolveResult result;
    const registry::Registry& reg = *know.reg;
    auto fail = [&result](Constraint c, std::string why) {
        result.ruled_out_by = c;
        result.why = std::move(why);
        return result;
    };
    if (wants.empty()) return fail(Constraint::Framework, "no framework to suit");

    // 1. The frameworks: the CUDA minors all of them allow.
    std::vector<Reason> framework_lines;
    std::optional<std::vector<Allowed>> allowed;
    std::string labels;
    for (const auto& w : wants) {
        auto got = allowed_by(w, reg, machine.platform, framework_lines);
        if (auto* f = std::get_if<Failed>(&got)) return fail(f->constraint, f->why);
        auto& mine = std::get<std::vector<Allowed>>(got);
        if (!allowed) {
            allowed = mine;
        } else {
            std::vector<Allowed> both;
            for (const auto& a : *allowed)
                for (const auto& b : mine) {
                    if (a.minor != b.minor) continue;
                    Allowed c = a;
                    if (b.cudnn && (!c.cudnn || b.cudnn->has_prefix(*c.cudnn)))
                        c.cudnn = b.cudnn;
                    else if (b.cudnn && !c.cudnn->has_prefix(*b.cudnn))
                        continue;
                    both.push_back(c);
                }
            if (both.empty()) {
                std::vector<Version> left, right;
                for (const auto& a : *allowed)
                    left.push_back(a.minor);
                for (const auto& b : mine)
                    right.push_back(b.minor);
                return fail(Constraint::Framework, labels + " (" + minors_text(left) + ") and " +
                                                       w.label + " (" + minors_text(right) +
                                                       ") share no CUDA version");
            }
            allowed = both;
        }
        labels += (labels.empty() ? "" : " and ") + w.label;
    }

    auto own_got = own_wheels_of(wants);
    if (auto* f = std::get_if<Failed>(&own_got)) return fail(f->constraint, f->why);
    const FrameworkWant* own_wheels = std::get<const FrameworkWant*>(own_got);

    // The toolkits of those minors: the registry's releases and the installed ones.
    std::vector<Candidate> cands;
    std::vector<Version> minors;
    for (const auto& a : *allowed) {
        minors.push_back(a.minor);
        std::set<std::vector<unsigned>> seen;
        for (const auto& t : machine.toolkits)
            if (t.has_prefix(a.minor) && seen.insert(t.parts).second)
                cands.push_back({t, true, a.cudnn, {}, false, true, true, {}});
        for (const auto* r : registry::find_cuda_releases(reg, a.minor))
            if (seen.insert(r->version.parts).second)
                cands.push_back({r->version, false, a.cudnn, {}, false, true, true, {}});
    }
    if (cands.empty())
        return fail(Constraint::Framework, "no release of " + minors_text(minors) + " (as " +
                                               labels +
                                               " needs) is in cvm's registry or installed");

    // Applies one constraint: `check` returns "" to keep a candidate (after adding its line) or
    // why it is out. When none is left, the constraint rules everything out.
    auto apply = [&](Constraint c, auto check) -> bool {
        std::vector<Candidate> kept;
        std::string last_why;
        for (auto& cand : cands) {
            std::string why = check(cand);
            if (why.empty())
                kept.push_back(std::move(cand));
            else
                last_why = why;
        }
        if (kept.empty()) {
            result.ruled_out_by = c;
            result.why = last_why;
            return false;
        }
        cands = std::move(kept);
        return true;
    };

    // 2. The driver.
    const char* plat = registry::platform_name(machine.platform);
    if (!machine.driver) {
        result.notes.push_back(
            "no NVIDIA driver found: the driver check is skipped (fine on a build or CI machine; "
            "running programs needs one)");
    } else {
        const auto& have = *machine.driver;
        std::optional<registry::DriverVersion> lowest_need;
        if (!apply(Constraint::Driver, [&](Candidate& c) -> std::string {
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
                        {Constraint::Driver, "driver " + have.text +
                                                 ": cvm knows no minimum driver of " + cuda +
                                                 " on " + plat + ", so it is not checked"});
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
                    c.reasons.push_back({Constraint::Driver,
                                         "driver " + have.text + " runs " + cuda + " (it needs " +
                                             (own ? own->driver.text : hard->text) + " or newer)"});
                }
                return {};
            }))
            return fail(Constraint::Driver,
                        "driver " + have.text + " is too old for " + minors_text(minors) + " (as " +
                            labels + " needs): the oldest of them needs " + lowest_need->text +
                            " or newer; update the NVIDIA driver");
    }

    // 3. The GPUs.
    if (machine.gpus.empty()) {
        result.notes.push_back("no GPU seen: the GPU architecture check is skipped");
    } else if (!know.archs) {
        result.notes.push_back(
            "cvm cannot read its table of GPU architectures: the GPU check is skipped");
    } else if (!apply(Constraint::Gpu, [&](Candidate& c) -> std::string {
                   const GpuArchRow* row = arch_row(*know.archs, c.toolkit);
                   if (!row) {
                       c.reasons.push_back(
                           {Constraint::Gpu, "GPU: cvm does not know which architectures CUDA " +
                                                 c.toolkit.str() + " builds for; not checked"});
                       return {};
                   }
                   std::vector<std::string> fine, slow;
                   for (const auto& g : machine.gpus) {
                       ArchJudgement j = judge_arch(*row, g, *know.archs);
                       if (j.support == ArchSupport::None) return j.message;
                       if (j.support == ArchSupport::PtxJit)
                           slow.push_back(j.message);
                       else if (std::find(fine.begin(), fine.end(),
                                          "sm_" + std::to_string(g.cc) + " (" + g.name + ")") ==
                                fine.end())
                           fine.push_back("sm_" + std::to_string(g.cc) + " (" + g.name + ")");
                   }
                   if (!slow.empty()) {
                       c.gpu_native = false;
                       c.reasons.push_back({Constraint::Gpu, slow.front()});
                   } else {
                       c.reasons.push_back({Constraint::Gpu, "GPU: CUDA " + c.toolkit.str() +
                                                                 " builds for " + join(fine)});
                   }
                   return {};
               })) {
        return result;
    }

    // 4. An installed host compiler nvcc accepts: never a reason to refuse, since frameworks from
    // wheels need no nvcc; a toolkit with one that fits is taken first, and the others get a note
    // with what to install for the builds that will need one (CUDA extensions).
    const bool windows = machine.platform == Platform::Windows;
    if (machine.compilers.empty()) {
        result.notes.push_back(
            "no host compiler found: the framework's wheels need none, but nvcc cannot build here "
            "until one is installed");
    } else {
        for (auto& c : cands) {
            const HostCompilerLimits* limits = nullptr;
            if (auto it = machine.toolkit_limits.find(c.toolkit.str());
                it != machine.toolkit_limits.end())
                limits = &it->second;
            else if (know.compilers)
                limits = limits_for(*know.compilers, c.toolkit);
            if (!limits) {
                c.reasons.push_back(
                    {Constraint::HostCompiler, "host compiler: cvm does not know which ones CUDA " +
                                                   c.toolkit.str() + " accepts; not checked"});
                continue;
            }
            std::vector<std::string> seen;
            bool unknown = false, fits = false;
            for (const auto& id : machine.compilers) {
                Verdict v = judge(*limits, id);
                if (v == Verdict::Supported) {
                    c.reasons.push_back({Constraint::HostCompiler,
                                         "host compiler: " + describe(id) + " is one CUDA " +
                                             c.toolkit.str() + " accepts (" +
                                             limits->describe(windows) + ")"});
                    fits = true;
                    break;
                }
                unknown = unknown || v == Verdict::Unknown;
                seen.push_back(describe(id));
            }
            if (fits) continue;
            if (unknown) {
                c.reasons.push_back(
                    {Constraint::HostCompiler, "host compiler: cvm cannot tell whether CUDA " +
                                                   c.toolkit.str() + " accepts " + join(seen)});
                continue;
            }
            c.compiler_fits = false;
            c.reasons.push_back(
                {Constraint::HostCompiler,
                 "note: no installed host compiler is one CUDA " + c.toolkit.str() +
                     " accepts (installed: " + join(seen) + "; it takes " +
                     limits->describe(windows) +
                     "): the framework's wheels need none; to build CUDA code with nvcc, " +
                     host_compiler_fix(*limits,
                                       windows ? platform::Os::Windows : platform::Os::Linux,
                                       machine.packaged)});
        }
    }

    // 5. The cuDNN the framework was tested with (TensorFlow); PyTorch brings its own.
    if (!apply(Constraint::Cudnn, [&](Candidate& c) -> std::string {
            // The cuDNN part a spec would have: what the frameworks were tested with, if anything.
            Spec wanted;
            wanted.cudnn = c.cudnn_prefix ? *c.cudnn_prefix : Version{};
            // The framework's own cuDNN wheel, where it serves the toolkit and suits what any
            // other framework was tested with.
            if (own_wheels && own_wheels->own_cudnn_build &&
                cudnn_fits(wanted, *own_wheels->own_cudnn_build, c.toolkit)) {
                c.cudnn = *own_wheels->own_cudnn_build;
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
        })) {
        return result;
    }

    // The choice: what is installed first, then what runs without compromise, then the newest.
    std::stable_sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
        auto key = [](const Candidate& c) {
            return std::make_tuple(c.installed, c.cudnn_installed || !c.cudnn_prefix, c.driver_full,
                                   c.gpu_native, c.compiler_fits);
        };
        if (key(a) != key(b)) return key(a) > key(b);
        return b.toolkit < a.toolkit;
    });
    Candidate& best = cands.front();
    Pick pick;
    pick.toolkit = best.toolkit;
    pick.toolkit_installed = best.installed;
    pick.cudnn = best.cudnn;
    pick.cudnn_installed = best.cudnn_installed;
    pick.reasons = framework_lines;
    std::set<std::string> fitting;
    for (const auto& c : cands)
        fitting.insert(major_minor(c.toolkit).str());
    std::string toolkit_line =
        "toolkit: CUDA " + best.toolkit.str() +
        (best.installed ? ", installed"
                        : ", the newest known " + major_minor(best.toolkit).str() +
                              " release, not installed yet (--install installs it)");
    if (fitting.size() > 1)
        toolkit_line += "; of the " + std::to_string(fitting.size()) +
                        " CUDA versions that fit, cvm takes an installed one first, then one the "
                        "driver and GPUs "
                        "run without compromise, then the newest";
    pick.reasons.push_back({Constraint::Framework, toolkit_line});
    for (auto& r : best.reasons)
        pick.reasons.push_back(std::move(r));
    if (own_wheels && own_wheels->own_nccl_build &&
        own_wheels->own_nccl_build->serves(best.toolkit))
        pick.nccl = own_wheels->own_nccl_build;
    pick.own_builds = best.own_cudnn || pick.nccl;
    if (pick.own_builds)
        pick.reasons.push_back(
            own_wheels_line(*own_wheels, best.own_cudnn ? best.cudnn : std::nullopt, pick.nccl));
    if (best.cudnn && !best.own_cudnn) {
        pick.reasons.push_back(
            {Constraint::Cudnn,
             "cuDNN " + best.cudnn->str() +
                 (best.cudnn_installed ? ", installed"
                                       : ", not installed yet (--install installs it)") +
                 ": " + labels + " was tested with cuDNN " + best.cudnn_prefix->str()});
    }
    for (const auto& w : wants) {
        if (w.name != "pytorch" || best.own_cudnn) continue;
        std::string own =
            w.own_cudnn.empty() ? "the nvidia-cudnn wheel it depends on" : w.own_cudnn;
        pick.reasons.push_back(
            {Constraint::Cudnn,
             std::string(best.cudnn ? "torch ignores this cuDNN" : "cuDNN: none paired") +
                 ": PyTorch brings its own (" + own +
                 ") and loads it first; a second cuDNN on the library path would at best go "
                 "unused and at worst mix with it"});
        break;
    }
    result.pick = std::move(pick);
    return result;
}

} // namespace cvm::compat
