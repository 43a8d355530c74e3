// A project folder's framework pins (compat/project_pins.h): which files are read, in which
// order, and the includes they may name. Each file's reader is its own: pin_requirements_txt,
// pin_toml_files (pyproject.toml, pixi.toml, Pipfile), pin_environment_yml; a pin's place is
// pin_requirement's, its version range version_clauses'.
#include "compat/project_pins.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "registry/registry.h"

namespace cvm::compat {

const char* const kProjectFileNames =
    "requirements*.txt, pyproject.toml, environment.yml, pixi.toml, Pipfile";

namespace {

namespace fs = std::filesystem;

// The text of a project file, shown as `shown` in errors; nullopt when there is no such file.
std::optional<std::string> read_project_file(const fs::path& p, const std::string& shown) {
    std::error_code e;
    if (!fs::is_regular_file(p, e)) return std::nullopt;
    if (fs::file_size(p, e) > 4u << 20)
        throw ProjectFileError(shown + ":1: larger than 4 MiB; not a project file cvm reads");
    std::ifstream in(p, std::ios::binary);
    if (!in) throw ProjectFileError(shown + ":1: cannot be read");
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// `-r NAME`: a file inside the folder `base`, named relative to it.
IncludeReader include_reader(const fs::path& base) {
    return [base](const std::string& name, const std::string& where) -> std::optional<std::string> {
        const fs::path rel = fs::u8path(name);
        bool outside =
            rel.is_absolute() || rel.has_root_name() || name.find("://") != std::string::npos;
        for (const auto& part : rel)
            if (part == "..") outside = true;
        if (outside)
            throw ProjectFileError(
                where + ": " + name +
                " is outside the project folder; cvm reads includes inside it only");
        return read_project_file(base / rel, name);
    };
}

// The requirements*.txt files of `base`: requirements.txt first, then the others by name.
std::vector<std::string> requirements_file_names(const fs::path& base) {
    std::error_code ec;
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(base, ec)) {
        const std::string n = e.path().filename().u8string();
        if (n.rfind("requirements", 0) == 0 && n.size() >= 16 && n.substr(n.size() - 4) == ".txt")
            names.push_back(n);
    }
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
        if ((a == "requirements.txt") != (b == "requirements.txt")) return a == "requirements.txt";
        return a < b;
    });
    return names;
}

} // namespace

std::string framework_of(std::string_view package_name) {
    std::string key = registry::framework_key(package_name);
    return key == "pytorch" || key == "tensorflow" || key == "jax" ? key : std::string();
}

std::vector<ProjectPin> read_project_pins(const fs::path& dir, std::vector<std::string>* read) {
    std::error_code ec;
    const fs::path base = fs::absolute(dir, ec);
    const IncludeReader include = include_reader(base);
    std::vector<ProjectPin> out;
    auto add = [&](const std::string& name, auto parse) {
        auto text = read_project_file(base / fs::u8path(name), name);
        if (!text) return;
        if (read) read->push_back(name);
        for (auto& p : parse(*text, name)) {
            const bool seen = std::any_of(out.begin(), out.end(), [&](const ProjectPin& q) {
                return q.file == p.file && q.line == p.line && q.text == p.text;
            });
            if (!seen) out.push_back(std::move(p));
        }
    };
    for (const auto& n : requirements_file_names(base))
        add(n, [&](std::string_view t, const std::string& f) {
            return requirements_pins(t, f, include);
        });
    add("pyproject.toml", pyproject_pins);
    bool yml = false;
    for (const char* n : {"environment.yml", "environment.yaml"})
        if (!yml && fs::is_regular_file(base / n, ec)) {
            yml = true;
            add(n, [&](std::string_view t, const std::string& f) {
                return environment_pins(t, f, include);
            });
        }
    add("pixi.toml", pixi_pins);
    add("Pipfile", pipfile_pins);
    return out;
}

} // namespace cvm::compat
