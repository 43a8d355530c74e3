// Conda dependencies as project pins (compat/pin_conda.h): environment.yml's and pixi.toml's.
#include "compat/pin_conda.h"

#include <cctype>

#include "compat/pin_requirement.h"
#include "compat/version_clauses.h"
#include "text/affixes.h"
#include "text/ascii.h"

namespace cvm::compat {

namespace {

using Op = VersionClause::Op;

// The CUDA a conda build string names ("py3.11_cuda12.1_cudnn9.1.0_0" -> 12.1).
std::optional<Version> build_cuda(const std::string& build) {
    auto p = build.find("cuda");
    if (p == std::string::npos) return std::nullopt;
    size_t e = p + 4;
    while (e < build.size() &&
           (std::isdigit(static_cast<unsigned char>(build[e])) || build[e] == '.'))
        ++e;
    auto v = parse_version(std::string_view(build).substr(p + 4, e - p - 4), 2, 3);
    if (!v) return std::nullopt;
    return first_parts(*v, 2);
}

// The CUDA a pytorch-cuda / cuda-version spec names ("12.1", "=12.1", "12.1.*").
std::optional<Version> spec_cuda(std::string_view spec) {
    auto clauses = conda_clauses(spec);
    if (!clauses || clauses->size() != 1) return std::nullopt;
    const auto& c = clauses->front();
    if ((c.op != Op::Equal && c.op != Op::Prefix) || c.version.parts.size() < 2)
        return std::nullopt;
    return first_parts(c.version, 2);
}

} // namespace

CondaDep conda_dep(std::string_view s) {
    CondaDep d;
    s = ascii_trim(s);
    if (auto colons = s.find("::"); colons != std::string_view::npos) s = s.substr(colons + 2);
    size_t i = 0;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i])) &&
           std::string_view("=<>!~[").find(s[i]) == std::string_view::npos)
        ++i;
    d.name = std::string(s.substr(0, i));
    std::string_view rest = ascii_trim(s.substr(i));
    if (!rest.empty() && rest.front() == '=' && !starts_with(rest, "==")) {
        // name=VERSION[=BUILD]
        rest.remove_prefix(1);
        auto eq = rest.find('=');
        d.version = "=" + std::string(ascii_trim(rest.substr(0, eq)));
        if (eq != std::string_view::npos) d.build = std::string(ascii_trim(rest.substr(eq + 1)));
        return d;
    }
    // name==VERSION=BUILD
    if (starts_with(rest, "==")) {
        auto eq = rest.find('=', 2);
        if (eq != std::string_view::npos) {
            d.version = std::string(ascii_trim(rest.substr(0, eq)));
            d.build = std::string(ascii_trim(rest.substr(eq + 1)));
            return d;
        }
    }
    // name [SPEC [BUILD]]
    auto space = rest.find_first_of(" \t");
    d.version = std::string(rest.substr(0, space));
    if (space != std::string_view::npos) d.build = std::string(ascii_trim(rest.substr(space)));
    return d;
}

void add_conda_dep(std::vector<ProjectPin>& out, std::string_view text, const CondaDep& d,
                   const std::string& file, unsigned line, CondaCuda& cuda) {
    const std::string name = ascii_lower(d.name);
    if (name == "pytorch-cuda") {
        auto v = spec_cuda(d.version);
        if (!v)
            fail_at(file, line,
                    "cannot read the CUDA version of " + std::string(ascii_trim(text)) +
                        " (write e.g. pytorch-cuda=12.1)");
        cuda = std::make_pair(*v, line);
        return;
    }
    std::string fw = framework_of(name);
    if (fw.empty()) return;
    ProjectPin pin = make_pin(fw, text, file, line);
    auto clauses = conda_clauses(d.version);
    if (!clauses)
        fail_at(file, line,
                "cannot read the version of " + pin.text + " (write e.g. " + d.name + "=2.4.1 or " +
                    d.name + ">=2.4,<2.6)");
    pin.clauses = std::move(*clauses);
    if (fw == "pytorch") pin.cuda = build_cuda(d.build);
    if (pin.cuda) pin.cuda_from = "its build string " + d.build;
    out.push_back(std::move(pin));
}

void apply_conda_cuda(std::vector<ProjectPin>& pins, const CondaCuda& cuda,
                      const std::string& file) {
    if (!cuda) return;
    bool any = false;
    const std::string from =
        "pytorch-cuda=" + cuda->first.str() + " from " + file_line(file, cuda->second);
    for (auto& p : pins)
        if (p.framework == "pytorch" && p.file == file) {
            if (!p.cuda) {
                p.cuda = cuda->first;
                p.cuda_from = from;
            }
            any = true;
        }
    if (!any) {
        ProjectPin pin =
            make_pin("pytorch", "pytorch-cuda=" + cuda->first.str(), file, cuda->second);
        pin.cuda = cuda->first;
        pin.cuda_from = from;
        pins.push_back(std::move(pin));
    }
}

} // namespace cvm::compat
