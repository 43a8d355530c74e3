#include "compat/solver.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <variant>

#include "compat/toolkit_candidates.h"
#include "text/ascii.h"
#include "text/suggest.h"

namespace cvm::compat {

namespace {

using registry::Platform;

Version major_minor(const Version& v) {
    return Version{{v.major(), v.minor()}};
}

// What one framework allows: CUDA minors, each with the cuDNN it was tested with (TensorFlow).
struct Allowed {
    Version minor;
    std::optional<Version> cudnn;
};

// The CUDA minors (and cuDNN) one framework allows, with the line saying why; a RuledOut when none.
std::variant<std::vector<Allowed>, RuledOut> allowed_by(const FrameworkWant& w,
                                                        const registry::Registry& reg,
                                                        Platform platform,
                                                        std::vector<Reason>& lines) {
    const registry::FrameworkRelease* rel =
        w.version.empty() ? nullptr : registry::find_framework(reg, w.name, w.version);
    const bool torch = w.name == "pytorch";
    if (w.installed && !w.built_cuda)
        return RuledOut{
            Constraint::Framework,
            w.label + " is a CPU build (" +
                (torch ? "torch.version.cuda is None" : "its build_info.py names no CUDA") +
                "): there is no CUDA to match; install a CUDA build of it, or name a release: "
                "--for " +
                (torch ? "torch==" : "tensorflow==") + (rel ? rel->version.str() : "VERSION")};
    if (!torch && platform == Platform::Windows && rel && !rel->windows_gpu)
        return RuledOut{Constraint::Platform,
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
        return RuledOut{Constraint::Framework,
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
std::variant<const FrameworkWant*, RuledOut>
own_wheels_of(const std::vector<FrameworkWant>& wants) {
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
            return RuledOut{Constraint::Cudnn,
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

} // namespace

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

namespace {

// What all the frameworks allow together: the CUDA minors (each with the cuDNN they were tested
// with), the lines saying why, and their labels joined ("tensorflow==2.10 and torch==2.1").
struct Agreement {
    std::vector<Allowed> allowed;
    std::vector<Reason> lines;
    std::string labels;
};

std::vector<Version> minors_of(const std::vector<Allowed>& allowed) {
    std::vector<Version> minors;
    for (const auto& a : allowed)
        minors.push_back(a.minor);
    return minors;
}

// The minors both allow, with the more exact of the two cuDNNs where both name one; a minor
// whose cuDNNs disagree is out.
std::vector<Allowed> shared_minors(const std::vector<Allowed>& ours,
                                   const std::vector<Allowed>& theirs) {
    std::vector<Allowed> both;
    for (const auto& a : ours)
        for (const auto& b : theirs) {
            if (a.minor != b.minor) continue;
            Allowed c = a;
            if (b.cudnn && (!c.cudnn || b.cudnn->has_prefix(*c.cudnn)))
                c.cudnn = b.cudnn;
            else if (b.cudnn && !c.cudnn->has_prefix(*b.cudnn))
                continue;
            both.push_back(c);
        }
    return both;
}

// The frameworks: the CUDA minors all of them allow. `wants` is not empty.
std::variant<Agreement, RuledOut> frameworks_agree(const std::vector<FrameworkWant>& wants,
                                                   const registry::Registry& reg,
                                                   Platform platform) {
    Agreement agreed;
    std::optional<std::vector<Allowed>> allowed;
    for (const auto& w : wants) {
        auto got = allowed_by(w, reg, platform, agreed.lines);
        if (auto* f = std::get_if<RuledOut>(&got)) return *f;
        auto& mine = std::get<std::vector<Allowed>>(got);
        if (!allowed) {
            allowed = mine;
        } else {
            std::vector<Allowed> both = shared_minors(*allowed, mine);
            if (both.empty())
                return RuledOut{Constraint::Framework,
                                agreed.labels + " (" + minors_text(minors_of(*allowed)) + ") and " +
                                    w.label + " (" + minors_text(minors_of(mine)) +
                                    ") share no CUDA version"};
            allowed = both;
        }
        agreed.labels += (agreed.labels.empty() ? "" : " and ") + w.label;
    }
    agreed.allowed = std::move(*allowed);
    return agreed;
}

// A candidate before the machine is asked: every judgement (driver, GPU, host compiler) still
// true. Named fields, not a positional list, which once left compiler_fits false.
Candidate candidate_of(const Version& toolkit, bool installed, const std::optional<Version>& cudnn) {
    Candidate c;
    c.toolkit = toolkit;
    c.installed = installed;
    c.cudnn_prefix = cudnn;
    return c;
}

// The toolkits of those minors: the registry's releases and the installed ones.
std::variant<std::vector<Candidate>, RuledOut> list_candidates(const Agreement& agreed,
                                                               const MachineFacts& machine,
                                                               const registry::Registry& reg) {
    std::vector<Candidate> cands;
    for (const auto& a : agreed.allowed) {
        std::set<std::vector<unsigned>> seen;
        for (const auto& t : machine.toolkits)
            if (t.has_prefix(a.minor) && seen.insert(t.parts).second)
                cands.push_back(candidate_of(t, true, a.cudnn));
        for (const auto* r : registry::find_cuda_releases(reg, a.minor))
            if (seen.insert(r->version.parts).second)
                cands.push_back(candidate_of(r->version, false, a.cudnn));
    }
    if (cands.empty())
        return RuledOut{Constraint::Framework,
                        "no release of " + minors_text(minors_of(agreed.allowed)) + " (as " +
                            agreed.labels + " needs) is in cvm's registry or installed"};
    return cands;
}

// The line naming the toolkit taken and, where several fit, how cvm chose among them.
Reason toolkit_line(const std::vector<Candidate>& ranked) {
    const Candidate& best = ranked.front();
    std::set<std::string> fitting;
    for (const auto& c : ranked)
        fitting.insert(major_minor(c.toolkit).str());
    std::string line = "toolkit: CUDA " + best.toolkit.str() +
                       (best.installed ? ", installed"
                                       : ", the newest known " + major_minor(best.toolkit).str() +
                                             " release, not installed yet (--install installs it)");
    if (fitting.size() > 1)
        line += "; of the " + std::to_string(fitting.size()) +
                " CUDA versions that fit, cvm takes an installed one first, then one the "
                "driver and GPUs "
                "run without compromise, then the newest";
    return {Constraint::Framework, line};
}

// The framework's own NCCL wheel, where it serves the toolkit taken.
std::optional<NcclId> own_nccl_for(const FrameworkWant* own_wheels, const Version& toolkit) {
    if (own_wheels && own_wheels->own_nccl_build && own_wheels->own_nccl_build->serves(toolkit))
        return own_wheels->own_nccl_build;
    return std::nullopt;
}

// The lines about cuDNN: the one paired and why, and that PyTorch loads its own.
void explain_cudnn(Pick& pick, const Candidate& best, const std::vector<FrameworkWant>& wants,
                   const std::string& labels) {
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
}

// The pick from the first of the ranked candidates, with its lines in constraint order: the
// frameworks', the toolkit's, the candidate's own, the framework's own wheels, cuDNN's.
Pick explain_pick(std::vector<Candidate>& ranked, const std::vector<FrameworkWant>& wants,
                  const FrameworkWant* own_wheels, const Agreement& agreed) {
    Candidate& best = ranked.front();
    Pick pick;
    pick.toolkit = best.toolkit;
    pick.toolkit_installed = best.installed;
    pick.cudnn = best.cudnn;
    pick.cudnn_installed = best.cudnn_installed;
    pick.reasons = agreed.lines;
    pick.reasons.push_back(toolkit_line(ranked));
    for (auto& r : best.reasons)
        pick.reasons.push_back(std::move(r));
    pick.nccl = own_nccl_for(own_wheels, best.toolkit);
    pick.own_builds = best.own_cudnn || pick.nccl;
    if (pick.own_builds)
        pick.reasons.push_back(
            own_wheels_line(*own_wheels, best.own_cudnn ? best.cudnn : std::nullopt, pick.nccl));
    explain_cudnn(pick, best, wants, agreed.labels);
    return pick;
}

} // namespace

SolveResult solve(const std::vector<FrameworkWant>& wants, const MachineFacts& machine,
                  const Knowledge& know) {
    SolveResult result;
    const registry::Registry& reg = *know.reg;
    auto fail = [&result](const RuledOut& out) {
        result.ruled_out_by = out.constraint;
        result.why = out.why;
        return result;
    };
    if (wants.empty()) return fail({Constraint::Framework, "no framework to suit"});

    auto agreed_got = frameworks_agree(wants, reg, machine.platform);
    if (auto* out = std::get_if<RuledOut>(&agreed_got)) return fail(*out);
    const Agreement& agreed = std::get<Agreement>(agreed_got);

    auto own_got = own_wheels_of(wants);
    if (auto* out = std::get_if<RuledOut>(&own_got)) return fail(*out);
    const FrameworkWant* own_wheels = std::get<const FrameworkWant*>(own_got);

    auto listed = list_candidates(agreed, machine, reg);
    if (auto* out = std::get_if<RuledOut>(&listed)) return fail(*out);
    auto& cands = std::get<std::vector<Candidate>>(listed);

    // The machine's constraints, in their order (toolkit_candidates.h).
    const std::vector<Version> minors = minors_of(agreed.allowed);
    if (auto out = apply_driver(cands, machine, reg, minors, agreed.labels, result.notes))
        return fail(*out);
    if (auto out = apply_gpus(cands, machine, know, result.notes)) return fail(*out);
    note_host_compilers(cands, machine, know, result.notes);
    const std::optional<CudnnId> own_cudnn =
        own_wheels ? own_wheels->own_cudnn_build : std::nullopt;
    if (auto out = choose_cudnn(cands, machine, reg, own_cudnn, agreed.labels)) return fail(*out);

    rank_candidates(cands);
    result.pick = explain_pick(cands, wants, own_wheels, agreed);
    return result;
}

} // namespace cvm::compat
