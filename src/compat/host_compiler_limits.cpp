#include "compat/host_compiler_limits.h"

#include <algorithm>
#include <toml++/toml.h>

#include "text/pattern.h"
#include "text/toml_input.h"
#include "platform/platform.h"
#include "registry/registry.h"

namespace cvm::registry {
extern const unsigned char embedded_host_compilers_toml[];
extern const std::size_t embedded_host_compilers_toml_size;
} // namespace cvm::registry

namespace cvm::compat {

namespace fs = std::filesystem;
using registry::RegistryError;

std::string HostCompilerLimits::describe(bool windows) const {
    if (windows) {
        if (!msc_min || !msc_max) return "no Visual Studio version is known";
        std::string vs_low = visual_studio_of(*msc_min), vs_high = visual_studio_of(*msc_max);
        std::string out = "MSVC " + std::to_string(*msc_min) + " to " + std::to_string(*msc_max);
        if (!vs_low.empty() && !vs_high.empty())
            out += vs_low == vs_high ? " (Visual Studio " + vs_low + ")"
                                     : " (Visual Studio " + vs_low + " to " + vs_high + ")";
        return out;
    }
    std::string out;
    if (gcc_max) out += "gcc up to " + std::to_string(*gcc_max);
    if (clang_max)
        out += std::string(out.empty() ? "" : ", ") + "clang " +
               (clang_min.empty() ? std::string() : clang_min.str() + " to ") + std::to_string(*clang_max);
    return out.empty() ? "no compiler range is known" : out;
}

namespace {

std::string key_error(const std::string& origin, const toml::node& node, const std::string& what) {
    return origin + ":" + std::to_string(node.source().begin.line) + ": " + what;
}

std::optional<unsigned> get_unsigned(const toml::table& row, const char* key, const std::string& origin) {
    const toml::node* n = row.get(key);
    if (!n) return std::nullopt;
    auto v = n->value<int64_t>();
    if (!v || *v < 0 || *v > 100000)
        throw RegistryError(key_error(origin, *n, std::string(key) + ": must be a whole number"));
    return static_cast<unsigned>(*v);
}

std::string get_string(const toml::table& row, const char* key, const std::string& origin, bool required) {
    const toml::node* n = row.get(key);
    if (!n) {
        if (required) throw RegistryError(origin + ": " + key + ": missing in a [[toolkit]] row");
        return {};
    }
    auto v = n->value<std::string>();
    if (!v) throw RegistryError(key_error(origin, *n, std::string(key) + ": must be a string"));
    return *v;
}

std::vector<std::string> get_strings(const toml::table& row, const char* key, const std::string& origin) {
    std::vector<std::string> out;
    const toml::node* n = row.get(key);
    if (!n) return out;
    const toml::array* list = n->as_array();
    if (!list) throw RegistryError(key_error(origin, *n, std::string(key) + ": must be a list of strings"));
    for (const auto& item : *list) {
        auto s = item.value<std::string>();
        if (!s) throw RegistryError(key_error(origin, item, std::string(key) + ": must be a list of strings"));
        out.push_back(*s);
    }
    return out;
}

} // namespace

HostCompilerTable parse_host_compiler_table(std::string_view text, const std::string& origin) {
    toml::table root = parse_toml<RegistryError>(text, origin, "");
    HostCompilerTable table;
    static const char* known_top[] = {"schema", "nvcc_ccbin_env", "nvcc_ccbin_source",
                                      "nvcc_ccbin_inferred", "toolkit"};
    static const char* known_row[] = {"cuda",      "gcc_max", "clang_min",     "clang_max", "msc_min",
                                      "msc_max",   "visual_studio", "source", "inferred"};
    for (const auto& [key, node] : root)
        if (std::find(std::begin(known_top), std::end(known_top), key.str()) == std::end(known_top))
            throw RegistryError(key_error(origin, node, std::string(key.str()) + ": unknown key"));
    std::string env = get_string(root, "nvcc_ccbin_env", origin, false);
    if (!env.empty()) {
        auto v = parse_version(env, 2, 3);
        if (!v) throw RegistryError(origin + ": nvcc_ccbin_env: '" + env + "' is not a CUDA version");
        table.nvcc_ccbin_env = *v;
    }
    table.nvcc_ccbin_source = get_string(root, "nvcc_ccbin_source", origin, false);
    if (const auto* b = root.get("nvcc_ccbin_inferred")) table.nvcc_ccbin_inferred = b->value_or(true);
    const toml::array* rows = root["toolkit"].as_array();
    if (!rows) throw RegistryError(origin + ": no [[toolkit]] rows");
    for (const auto& item : *rows) {
        const toml::table* row = item.as_table();
        if (!row) throw RegistryError(key_error(origin, item, "toolkit: must be a [[toolkit]] table"));
        for (const auto& [key, node] : *row)
            if (std::find(std::begin(known_row), std::end(known_row), key.str()) == std::end(known_row))
                throw RegistryError(key_error(origin, node, std::string(key.str()) + ": unknown key"));
        HostCompilerLimits l;
        std::string cuda = get_string(*row, "cuda", origin, true);
        auto v = parse_version(cuda, 2, 2);
        if (!v) throw RegistryError(key_error(origin, *row, "cuda: '" + cuda + "' is not MAJOR.MINOR"));
        l.cuda = *v;
        l.gcc_max = get_unsigned(*row, "gcc_max", origin);
        l.clang_max = get_unsigned(*row, "clang_max", origin);
        std::string clang_min = get_string(*row, "clang_min", origin, false);
        if (!clang_min.empty()) {
            auto m = parse_version(clang_min, 1, 3);
            if (!m) throw RegistryError(key_error(origin, *row, "clang_min: '" + clang_min + "' is not a version"));
            l.clang_min = *m;
        }
        l.msc_min = get_unsigned(*row, "msc_min", origin);
        l.msc_max = get_unsigned(*row, "msc_max", origin);
        if (l.msc_min && l.msc_max && *l.msc_min > *l.msc_max)
            throw RegistryError(key_error(origin, *row, "msc_min is above msc_max"));
        l.visual_studio = get_strings(*row, "visual_studio", origin);
        l.source = get_string(*row, "source", origin, true);
        l.inferred = get_strings(*row, "inferred", origin);
        table.rows.push_back(std::move(l));
    }
    std::sort(table.rows.begin(), table.rows.end(),
              [](const auto& a, const auto& b) { return a.cuda < b.cuda; });
    for (size_t i = 1; i < table.rows.size(); ++i)
        if (table.rows[i].cuda == table.rows[i - 1].cuda)
            throw RegistryError(origin + ": cuda " + table.rows[i].cuda.str() + " has two [[toolkit]] rows");
    return table;
}

HostCompilerTable load_host_compiler_table() {
    auto [text, origin] = registry::registry_table_text(
        "host_compilers.toml", {reinterpret_cast<const char*>(registry::embedded_host_compilers_toml),
                                registry::embedded_host_compilers_toml_size});
    return parse_host_compiler_table(text, origin);
}

const HostCompilerLimits* limits_for(const HostCompilerTable& table, const Version& cuda) {
    for (const auto& row : table.rows)
        if (row.cuda.major() == cuda.major() && row.cuda.minor() == cuda.minor()) return &row;
    return nullptr;
}

std::optional<HostCompilerLimits> limits_from_host_config(std::string_view header, const Version& cuda) {
    // Only the #if lines that end in an #error are checks; the header's own comments repeat them.
    std::string text(header);
    HostCompilerLimits l;
    l.cuda = cuda;
    l.source = "host_config.h";
    bool any = false;
    static const Pattern gnu(R"(#if\s+__GNUC__\s*>\s*(\d+)\s*\n)");
    if (auto m = gnu.search(text)) {
        l.gcc_max = static_cast<unsigned>(std::stoul((*m)[1]));
        any = true;
    }
    // The plain clang check is the one guarded by `defined(__clang__) && !defined(__ibmxl_vrm__)`;
    // Grace and HOS clang checks come with their own guards.
    static const Pattern clang_guard(R"(#if defined\(__clang__\) && !defined\(__ibmxl_vrm__\)[^\n]*\n\s*#if \(__clang_major__ >= (\d+)\) \|\| \(__clang_major__ < (\d+)\) \|\| \(\(__clang_major__ == (\d+)\) &&\s*\(__clang_minor__ < (\d+)\)\))");
    if (auto m = clang_guard.search(text)) {
        l.clang_max = static_cast<unsigned>(std::stoul((*m)[1])) - 1;
        l.clang_min = Version{{static_cast<unsigned>(std::stoul((*m)[3])), static_cast<unsigned>(std::stoul((*m)[4]))}};
        any = true;
    }
    static const Pattern msc(R"(#if\s+_MSC_VER\s*<\s*(\d+)\s*\|\|\s*_MSC_VER\s*>=\s*(\d+)\s*\n)");
    if (auto m = msc.search(text)) {
        l.msc_min = static_cast<unsigned>(std::stoul((*m)[1]));
        l.msc_max = static_cast<unsigned>(std::stoul((*m)[2])) - 1;
        any = true;
    }
    if (!any) return std::nullopt;
    return l;
}

std::optional<HostCompilerLimits> read_toolkit_host_config(const fs::path& root, const Version& cuda) {
    std::vector<fs::path> candidates = {root / "include" / "crt" / "host_config.h"};
    std::error_code ec;
    for (const char* target : {"x86_64-linux", "sbsa-linux", "aarch64-linux", "x64"})
        candidates.push_back(root / "targets" / target / "include" / "crt" / "host_config.h");
    // An assembled root links bin/nvcc to the real one; its headers sit beside it.
    fs::path nvcc = fs::canonical(root / "bin" / "nvcc", ec);
    if (!ec) {
        candidates.push_back(nvcc.parent_path().parent_path() / "include" / "crt" / "host_config.h");
        // Debian's nvidia-cuda-toolkit keeps its headers in /usr/include.
        if (nvcc.parent_path() == "/usr/lib/nvidia-cuda-toolkit/bin")
            candidates.push_back("/usr/include/crt/host_config.h");
    }
    for (const auto& file : candidates) {
        auto text = platform::read_file(file, 1 << 20);
        if (!text) continue;
        if (auto l = limits_from_host_config(*text, cuda)) {
            l->source = file.u8string();
            return l;
        }
    }
    return std::nullopt;
}

Verdict judge(const HostCompilerLimits& l, const CompilerId& c) {
    switch (c.kind) {
    case CompilerKind::Gcc:
        if (!l.gcc_max) return Verdict::Unknown;
        return c.version.major() > *l.gcc_max ? Verdict::TooNew : Verdict::Supported;
    case CompilerKind::Clang:
        if (!l.clang_max) return Verdict::Unknown;
        if (c.version.major() > *l.clang_max) return Verdict::TooNew;
        if (!l.clang_min.empty() && Version{{c.version.major(), c.version.minor()}} < l.clang_min)
            return Verdict::TooOld;
        return Verdict::Supported;
    case CompilerKind::Msvc: {
        if (!l.msc_min || !l.msc_max) return Verdict::Unknown;
        unsigned msc = msc_ver(c.version);
        if (msc > *l.msc_max) return Verdict::TooNew;
        if (msc < *l.msc_min) return Verdict::TooOld;
        return Verdict::Supported;
    }
    }
    return Verdict::Unknown;
}

} // namespace cvm::compat
