// The TOML project files' pins: pyproject.toml (PEP 621, dependency groups, Poetry), Pipfile
// and pixi.toml (conda and PyPI dependencies, also under features and targets), read by toml++.
#include <algorithm>
#include <functional>
#include <toml++/toml.h>

#include "compat/pin_conda.h"
#include "compat/pin_requirement.h"
#include "compat/project_pins.h"
#include "compat/version_clauses.h"
#include "text/ascii.h"
#include "text/toml_input.h"

namespace cvm::compat {

namespace {

unsigned line_of(const toml::node& n) {
    return static_cast<unsigned>(n.source().begin.line);
}

// A list of PEP 508 strings (PEP 621 dependencies, a dependency group).
void pep508_array(std::vector<ProjectPin>& out, const toml::node* node, const std::string& file,
                  const std::string& key) {
    if (!node) return;
    const toml::array* a = node->as_array();
    if (!a) fail_at(file, line_of(*node), key + " is not a list of requirements");
    for (const auto& item : *a) {
        if (item.is_table()) continue; // a dependency group's {include-group = "..."}
        auto s = item.value<std::string>();
        if (!s) fail_at(file, line_of(item), key + " holds a value that is not a string");
        if (auto pin = requirement_pin(*s, file, line_of(item))) out.push_back(std::move(*pin));
    }
}

// A table NAME = VERSION-SPEC or NAME = { version = ... } (Poetry, Pipfile, pixi). `read` turns
// the spec text into clauses; a table without a version (a git or path source) is skipped.
using ReadSpec =
    std::function<std::optional<std::vector<VersionClause>>(const std::string&, ProjectPin&)>;

void name_table(std::vector<ProjectPin>& out, const toml::node* node, const std::string& file,
                const std::string& key, const ReadSpec& read, const char* example) {
    if (!node) return;
    const toml::table* t = node->as_table();
    if (!t) fail_at(file, line_of(*node), "[" + key + "] is not a table");
    for (const auto& [k, value] : *t) {
        const std::string name(k.str());
        std::string fw = framework_of(name);
        if (fw.empty()) continue;
        std::optional<std::string> spec = value.value<std::string>();
        const toml::node* where = &value;
        if (const toml::table* inline_table = value.as_table()) {
            const toml::node* v = inline_table->get("version");
            if (!v) continue;
            spec = v->value<std::string>();
            where = v;
        } else if (value.is_array()) {
            fail_at(file, line_of(value),
                    name + ": cvm reads one constraint per framework, not a list of them");
        }
        const unsigned line = line_of(*where);
        if (!spec) fail_at(file, line, name + "'s version is not a string");
        ProjectPin pin = make_pin(fw, name + " = \"" + *spec + "\"", file, line);
        auto clauses = read(*spec, pin);
        if (!clauses)
            fail_at(file, line,
                    "cannot read the version of " + pin.text + " (write e.g. " + name + " = \"" +
                        example + "\")");
        pin.clauses = std::move(*clauses);
        out.push_back(std::move(pin));
    }
}

// Pipfile and pixi PyPI versions: PEP 440, a bare version meaning ==.
std::optional<std::vector<VersionClause>> pypi_value(const std::string& spec, ProjectPin& pin) {
    return pep440_clauses(spec, &pin.cuda_tag, "==");
}

// A TOML file's pins in the order of its lines (toml++ keeps a table's keys sorted).
std::vector<ProjectPin> by_line(std::vector<ProjectPin> pins) {
    std::stable_sort(pins.begin(), pins.end(),
                     [](const ProjectPin& a, const ProjectPin& b) { return a.line < b.line; });
    return pins;
}

// pixi's [dependencies] (conda packages, shown as `here`): the frameworks' pins; pytorch-cuda
// sets `cuda`.
void pixi_conda_table(std::vector<ProjectPin>& out, const toml::node& v, const std::string& here,
                      const std::string& file, CondaCuda& cuda) {
    const toml::table* deps = v.as_table();
    if (!deps) fail_at(file, line_of(v), "[" + here + "] is not a table");
    for (const auto& [name, value] : *deps) {
        const std::string n(name.str());
        if (framework_of(n).empty() && ascii_lower(n) != "pytorch-cuda") continue;
        CondaDep d{n, {}, {}};
        const toml::node* spec = &value;
        if (const toml::table* inline_table = value.as_table()) {
            spec = inline_table->get("version");
            if (auto b = inline_table->get_as<std::string>("build")) d.build = b->get();
            if (!spec) {
                if (d.build.empty()) continue; // a path or git source
                spec = &value;
                d.version = "*";
            }
        }
        if (d.version.empty()) {
            auto s = spec->value<std::string>();
            if (!s) fail_at(file, line_of(*spec), n + "'s version is not a string");
            d.version = *s;
        }
        add_conda_dep(out, n + " = \"" + d.version + "\"", d, file, line_of(*spec), cuda);
    }
}

// One table of pixi.toml (`path`: "" for the root): [dependencies] and [pypi-dependencies], also
// under [feature.X] and [target.PLATFORM]. A table's pytorch-cuda applies to the file's torch pins.
void pixi_tables(std::vector<ProjectPin>& out, const toml::table& t, const std::string& path,
                 const std::string& file) {
    CondaCuda cuda;
    for (const auto& [k, v] : t) {
        const std::string key(k.str()), here = path.empty() ? key : path + "." + key;
        if (key == "dependencies") {
            pixi_conda_table(out, v, here, file, cuda);
        } else if (key == "pypi-dependencies") {
            name_table(out, &v, file, here, pypi_value, ">=2.4");
        } else if ((key == "feature" || key == "target" || path.rfind("feature", 0) == 0 ||
                    path.rfind("target", 0) == 0) &&
                   v.is_table()) {
            pixi_tables(out, *v.as_table(), here, file);
        }
    }
    apply_conda_cuda(out, cuda, file);
}

} // namespace

std::vector<ProjectPin> pyproject_pins(std::string_view text, const std::string& file) {
    toml::table root = parse_toml<ProjectFileError>(text, file, "");
    std::vector<ProjectPin> out;
    pep508_array(out, root.at_path("project.dependencies").node(), file, "[project] dependencies");
    if (const toml::table* optional = root.at_path("project.optional-dependencies").as_table())
        for (const auto& [k, v] : *optional)
            pep508_array(out, &v, file, "[project.optional-dependencies] " + std::string(k.str()));
    if (const toml::table* groups = root["dependency-groups"].as_table())
        for (const auto& [k, v] : *groups)
            pep508_array(out, &v, file, "[dependency-groups] " + std::string(k.str()));
    auto poetry = [](const std::string& spec, ProjectPin&) { return poetry_clauses(spec); };
    name_table(out, root.at_path("tool.poetry.dependencies").node(), file,
               "tool.poetry.dependencies", poetry, "^2.4");
    name_table(out, root.at_path("tool.poetry.dev-dependencies").node(), file,
               "tool.poetry.dev-dependencies", poetry, "^2.4");
    if (const toml::table* groups = root.at_path("tool.poetry.group").as_table())
        for (const auto& [k, v] : *groups)
            if (const toml::table* g = v.as_table())
                name_table(out, g->get("dependencies"), file,
                           "tool.poetry.group." + std::string(k.str()) + ".dependencies", poetry,
                           "^2.4");
    return by_line(std::move(out));
}

std::vector<ProjectPin> pipfile_pins(std::string_view text, const std::string& file) {
    toml::table root = parse_toml<ProjectFileError>(text, file, "");
    std::vector<ProjectPin> out;
    // [packages], [dev-packages] and any other category; [source], [requires], [pipenv] and
    // [scripts] hold no packages.
    for (const auto& [k, v] : root) {
        const std::string key(k.str());
        if (key == "source" || key == "requires" || key == "pipenv" || key == "scripts") continue;
        if (!v.is_table()) continue;
        name_table(out, &v, file, key, pypi_value, "==2.4.1");
    }
    return by_line(std::move(out));
}

std::vector<ProjectPin> pixi_pins(std::string_view text, const std::string& file) {
    toml::table root = parse_toml<ProjectFileError>(text, file, "");
    std::vector<ProjectPin> out;
    pixi_tables(out, root, "", file);
    return by_line(std::move(out));
}

} // namespace cvm::compat
