#include "compat/project_wants.h"

#include <algorithm>
#include <cctype>

namespace cvm::compat {

namespace {

std::string shown_name(const std::string& framework) {
    return framework == "pytorch" ? "torch" : framework;
}

std::string words(const ProjectPin& p) {
    return p.file.empty() ? p.text : p.text + " from " + p.where();
}

std::string join_with(const std::vector<std::string>& parts, const std::string& sep) {
    std::string out;
    for (const auto& p : parts)
        out += (out.empty() ? "" : sep) + p;
    return out;
}

bool same_release(const Version& a, const Version& b) {
    const size_t n = std::max(a.parts.size(), b.parts.size());
    for (size_t i = 0; i < n; ++i)
        if ((i < a.parts.size() ? a.parts[i] : 0) != (i < b.parts.size() ? b.parts[i] : 0))
            return false;
    return true;
}

// torch's local version "cu121" as a CUDA version (12.1); nullopt for another label ("cpu").
std::optional<Version> tag_cuda(const std::string& tag) {
    if (tag.size() < 4 || tag.compare(0, 2, "cu") != 0) return std::nullopt;
    const std::string digits = tag.substr(2);
    if (!std::all_of(digits.begin(), digits.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        return std::nullopt;
    return parse_version(digits.substr(0, digits.size() - 1) + "." + digits.back(), 2, 2);
}

// The CUDA a pin asks for (its +cuNNN, or conda's pytorch-cuda / build string).
std::optional<Version> pin_cuda(const ProjectPin& p) {
    if (p.cuda) return p.cuda;
    return p.cuda_tag.empty() ? std::nullopt : tag_cuda(p.cuda_tag);
}

std::string known_range(const std::vector<const registry::FrameworkRelease*>& releases) {
    return "it knows " + releases.front()->version.str() + " to " + releases.back()->version.str() +
           ": cvm list --available";
}

// One framework's pins (all of one framework) into its candidates.
WantChoices choices_of(const registry::Registry& reg, const std::string& fw,
                       const std::vector<const ProjectPin*>& pins) {
    const std::string shown = shown_name(fw);
    const auto releases = registry::framework_releases(reg, fw);
    auto admits = [&](const registry::FrameworkRelease* r, std::vector<const ProjectPin*> of) {
        return std::all_of(of.begin(), of.end(), [&](const ProjectPin* p) {
            return series_allowed(p->clauses, r->version);
        });
    };
    auto admitted = [&](std::vector<const ProjectPin*> of) {
        std::vector<const registry::FrameworkRelease*> out;
        for (const auto* r : releases)
            if (admits(r, of)) out.push_back(r);
        return out;
    };
    // A pin alone that admits no release the registry knows.
    for (const ProjectPin* p : pins) {
        if (!admitted({p}).empty()) continue;
        if (auto v = p->exact()) {
            try {
                parse_framework_want(reg, shown + "==" + v->str());
            } catch (const FrameworkInputError& e) {
                throw FrameworkInputError(words(*p) + ": " + e.what());
            }
        }
        throw FrameworkInputError(words(*p) + ": cvm's registry knows no " + shown +
                                  " release in this range (" + known_range(releases) + ")");
    }
    // Two pins that admit no common release, or name two releases or two CUDA builds.
    for (size_t i = 0; i < pins.size(); ++i)
        for (size_t j = i + 1; j < pins.size(); ++j) {
            const ProjectPin &a = *pins[i], &b = *pins[j];
            const auto ea = a.exact(), eb = b.exact();
            if (admitted({&a, &b}).empty() || (ea && eb && !same_release(*ea, *eb)))
                throw FrameworkInputError(words(a) + " and " + words(b) +
                                          " admit no common release; make them agree");
            const auto ca = pin_cuda(a), cb = pin_cuda(b);
            if (ca && cb && *ca != *cb)
                throw FrameworkInputError(words(a) + " asks for CUDA " + ca->str() + " and " +
                                          words(b) + " for CUDA " + cb->str() +
                                          "; make them agree");
        }
    auto allowed = admitted(pins);
    std::vector<std::string> all;
    for (const ProjectPin* p : pins)
        all.push_back(words(*p));
    if (allowed.empty())
        throw FrameworkInputError(join_with(all, ", ") + " admit no common release; make them agree");

    WantChoices out;
    out.framework = fw;
    out.asked = join_with(all, " and ");
    const ProjectPin* exact = nullptr;
    const ProjectPin* cuda_pin = nullptr;
    for (const ProjectPin* p : pins) {
        if (!exact && p->exact()) exact = p;
        // A local label that is no CUDA tag (+cpu) goes to parse_framework_want, which refuses it.
        if (!cuda_pin && (pin_cuda(*p) || !p->cuda_tag.empty())) cuda_pin = p;
    }
    // The candidate of one release: parse_framework_want's, with the pins' CUDA build.
    auto want_of = [&](const Version& version, bool required) -> std::optional<FrameworkWant> {
        std::string text = shown + "==" + version.str();
        if (cuda_pin && !cuda_pin->cuda_tag.empty() && !cuda_pin->cuda) text += "+" + cuda_pin->cuda_tag;
        FrameworkWant w;
        try {
            w = parse_framework_want(reg, text);
        } catch (const FrameworkInputError& e) {
            throw FrameworkInputError((cuda_pin ? words(*cuda_pin) : out.asked) + ": " + e.what());
        }
        if (cuda_pin && fw == "pytorch" && pin_cuda(*cuda_pin)) {
            const Version cuda = *pin_cuda(*cuda_pin);
            const auto* rel = registry::find_framework(reg, fw, w.version);
            const auto* b = rel ? registry::find_framework_build(*rel, cuda) : nullptr;
            if (!b) {
                if (!required) return std::nullopt;
                std::vector<std::string> ships;
                if (rel)
                    for (const auto& x : rel->builds)
                        ships.push_back(x.cuda.str());
                throw FrameworkInputError(words(*cuda_pin) + ": " + shown + " " +
                                          (rel ? rel->version.str() : version.str()) +
                                          " has no build for CUDA " + cuda.str() + " (it ships CUDA " +
                                          join_with(ships, ", ") + ")");
            }
            w.built_cuda = b->cuda;
            w.cuda_source = !cuda_pin->cuda_from.empty() ? cuda_pin->cuda_from
                            : cuda_pin == exact       ? "its +" + cuda_pin->cuda_tag
                                                      : words(*cuda_pin);
        }
        w.source = pins.front()->file.empty() ? std::string() : pins.front()->where();
        return w;
    };
    if (exact) {
        out.candidates.push_back(*want_of(*exact->exact(), true));
        out.candidates.back().label = words(*exact);
        return out;
    }
    for (auto it = allowed.rbegin(); it != allowed.rend(); ++it)
        if (auto w = want_of((*it)->version, false)) {
            w->label = shown + " " + w->version.str() + " (" + out.asked + ")";
            out.candidates.push_back(std::move(*w));
        }
    if (out.candidates.empty()) // none has the build: the newest says so
        want_of(allowed.back()->version, true);
    return out;
}

} // namespace

ProjectWants project_wants(const registry::Registry& reg, const std::vector<ProjectPin>& pins) {
    ProjectWants out;
    std::vector<std::string> order;
    for (const auto& p : pins)
        if (std::find(order.begin(), order.end(), p.framework) == order.end())
            order.push_back(p.framework);
    std::vector<std::string> jax;
    for (const auto& fw : order) {
        std::vector<const ProjectPin*> mine;
        for (const auto& p : pins)
            if (p.framework == fw) mine.push_back(&p);
        if (fw == "jax") {
            for (const ProjectPin* p : mine)
                jax.push_back(words(*p));
            continue;
        }
        out.choices.push_back(choices_of(reg, fw, mine));
    }
    if (!jax.empty()) {
        const std::string line = join_with(jax, ", ") +
                                 ": cvm's registry has no JAX releases (JAX brings its CUDA "
                                 "libraries in its own wheels; `cvm doctor` checks them)";
        if (out.choices.empty())
            throw FrameworkInputError(line + "; pin torch or tensorflow, or name one: --for torch==2.5");
        out.notes.push_back(line + "; only " + shown_name(out.choices.front().framework) +
                            " is matched");
    }
    return out;
}

bool range_choices(const registry::Registry& reg, const std::string& text, WantChoices& out) {
    std::vector<ProjectPin> pins;
    try {
        pins = requirements_pins(text, "");
    } catch (const ProjectFileError&) {
        throw FrameworkInputError(text + ": write NAME==VERSION, a range (torch>=2.4,<2.6), a "
                                         "bare name (torch) or . for the project here");
    }
    if (pins.size() != 1 || pins[0].framework == "jax") return false;
    const ProjectPin& p = pins[0];
    if (p.clauses.size() == 1 && p.clauses[0].op == VersionClause::Op::Equal) return false;
    out = choices_of(reg, p.framework, {&p});
    if (p.clauses.empty()) {
        // A bare name: every release cvm knows.
        out.asked = "--for " + text;
        for (auto& w : out.candidates)
            w.label = shown_name(p.framework) + " " + w.version.str();
    }
    return true;
}

std::vector<FrameworkWant> choose_newest(const std::vector<WantChoices>& choices,
                                         const MachineFacts& machine, const Knowledge& know,
                                         std::vector<ChoiceLine>& lines) {
    std::vector<FrameworkWant> taken;
    for (const auto& ch : choices) {
        ChoiceLine line;
        if (ch.candidates.size() == 1) {
            taken.push_back(ch.candidates.front());
            lines.push_back(line);
            continue;
        }
        const FrameworkWant* got = nullptr;
        for (const auto& c : ch.candidates) {
            std::vector<FrameworkWant> trial = taken;
            trial.push_back(c);
            SolveResult res = solve(trial, machine, know);
            if (res.pick) {
                got = &c;
                break;
            }
            line.passed.emplace_back(c.version.str(), std::string("the ") +
                                                          constraint_words(res.ruled_out_by) +
                                                          " rules it out: " + res.why);
        }
        const bool fits = got != nullptr;
        if (!got) got = &ch.candidates.front();
        const bool bare = ch.asked.rfind("--for ", 0) == 0;
        const std::string release = shown_name(ch.framework) + " " + got->version.str();
        line.text = ch.asked + ": " +
                    (fits ? "took " + release + ", the newest release " +
                                (bare ? "cvm knows" : "it admits") + " that this machine can run"
                          : "no release " + std::string(bare ? "cvm knows" : "it admits") +
                                " runs on this machine; " + release + " is the newest");
        std::vector<std::string> passed;
        if (fits)
            for (const auto& [version, why] : line.passed)
                passed.push_back(version + " (" + why + ")");
        if (!passed.empty()) line.text += "; passed over " + join_with(passed, "; ");
        taken.push_back(*got);
        lines.push_back(line);
    }
    return taken;
}

} // namespace cvm::compat
