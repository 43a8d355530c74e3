// Reading registry/*.toml into a Registry. Every value is checked for type and form, and unknown
// keys are refused, so a typo in the data is an error that names the file, line and key rather
// than a silently missing fact.
#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "text/toml_input.h"

#include "platform/platform.h"
#include "registry/registry.h"
#include "registry/rows.h"

namespace cvm::registry {

namespace {

std::string position(const toml::source_region& src, const std::string& fallback_file) {
    std::string file = src.path ? *src.path : fallback_file;
    std::string out = file;
    if (src.begin.line != 0) {
        out += ":" + std::to_string(src.begin.line);
        if (src.begin.column != 0) out += ":" + std::to_string(src.begin.column);
    }
    return out;
}

// Reads one file's tables with checks; every failure throws RegistryError at a position.
class Reader {
public:
    explicit Reader(std::string file) : file_(std::move(file)) {}

    [[noreturn]] void fail(const toml::source_region& src, const std::string& key,
                           const std::string& what) const {
        std::string msg = position(src, file_) + ": ";
        if (!key.empty()) msg += key + ": ";
        msg += what;
        throw RegistryError(msg);
    }

    // Refuses keys outside `allowed`.
    void check_keys(const toml::table& t, const std::string& where,
                    std::initializer_list<const char*> allowed) const {
        for (const auto& entry : t) {
            const toml::key& k = entry.first;
            const std::string_view name = k.str();
            bool ok = std::any_of(allowed.begin(), allowed.end(),
                                  [name](const char* a) { return name == a; });
            if (!ok) {
                std::string list;
                for (const char* a : allowed)
                    list += (list.empty() ? "" : ", ") + std::string(a);
                fail(k.source(), where + "." + std::string(name),
                     "unknown key (known keys: " + list + ")");
            }
        }
    }

    const toml::node* find(const toml::table& t, const char* key) const { return t.get(key); }

    std::optional<std::string> opt_string(const toml::table& t, const std::string& where,
                                          const char* key) const {
        const toml::node* n = find(t, key);
        if (!n) return std::nullopt;
        auto s = n->as_string();
        if (!s) fail(n->source(), where + "." + key, "expected a string");
        return s->get();
    }

    std::string string(const toml::table& t, const std::string& where, const char* key) const {
        auto s = opt_string(t, where, key);
        if (!s) fail(t.source(), where + "." + key, "missing");
        return *s;
    }

    std::optional<Version> opt_version(const toml::table& t, const std::string& where,
                                       const char* key, size_t min_parts, size_t max_parts) const {
        auto s = opt_string(t, where, key);
        if (!s) return std::nullopt;
        auto v = parse_version(*s, min_parts, max_parts);
        if (!v)
            fail(find(t, key)->source(), where + "." + key,
                 "\"" + printable(*s) + "\" is not a version of " + std::to_string(min_parts) +
                     (min_parts == max_parts ? "" : " to " + std::to_string(max_parts)) +
                     " numbers");
        return v;
    }

    Version version(const toml::table& t, const std::string& where, const char* key,
                    size_t min_parts, size_t max_parts) const {
        auto v = opt_version(t, where, key, min_parts, max_parts);
        if (!v) fail(t.source(), where + "." + key, "missing");
        return *v;
    }

    std::optional<DriverVersion> opt_driver(const toml::table& t, const std::string& where,
                                            const char* key) const {
        auto s = opt_string(t, where, key);
        if (!s) return std::nullopt;
        auto d = parse_driver_version(*s);
        if (!d)
            fail(find(t, key)->source(), where + "." + key,
                 "\"" + printable(*s) + "\" is not a driver version like \"460.27.03\"");
        return d;
    }

    bool boolean(const toml::table& t, const std::string& where, const char* key,
                 std::optional<bool> fallback) const {
        const toml::node* n = find(t, key);
        if (!n) {
            if (!fallback) fail(t.source(), where + "." + key, "missing");
            return *fallback;
        }
        auto b = n->as_boolean();
        if (!b) fail(n->source(), where + "." + key, "expected true or false");
        return b->get();
    }

    unsigned small_uint(const toml::table& t, const std::string& where, const char* key) const {
        const toml::node* n = find(t, key);
        if (!n) fail(t.source(), where + "." + key, "missing");
        auto i = n->as_integer();
        if (!i || i->get() < 0 || i->get() > 1000)
            fail(n->source(), where + "." + key, "expected a whole number from 0 to 1000");
        return static_cast<unsigned>(i->get());
    }

    std::vector<std::string> strings(const toml::table& t, const std::string& where,
                                     const char* key) const {
        std::vector<std::string> out;
        const toml::node* n = find(t, key);
        if (!n) return out;
        auto arr = n->as_array();
        if (!arr) fail(n->source(), where + "." + key, "expected an array of strings");
        for (const toml::node& e : *arr) {
            auto s = e.as_string();
            if (!s) fail(e.source(), where + "." + key, "expected an array of strings");
            out.push_back(s->get());
        }
        return out;
    }

    // The tables of an array of tables ([[key]]); empty when absent.
    std::vector<const toml::table*> tables(const toml::table& t, const std::string& where,
                                           const char* key) const {
        std::vector<const toml::table*> out;
        const toml::node* n = find(t, key);
        if (!n) return out;
        auto arr = n->as_array();
        if (!arr) fail(n->source(), where + key, "expected [[" + std::string(key) + "]] tables");
        for (const toml::node& e : *arr) {
            auto tbl = e.as_table();
            if (!tbl) fail(e.source(), where + key, "expected [[" + std::string(key) + "]] tables");
            out.push_back(tbl);
        }
        return out;
    }

    void check_schema(const toml::table& root) const {
        const toml::node* n = find(root, "schema");
        if (!n) fail(root.source(), "schema", "missing (expected schema = 1)");
        auto i = n->as_integer();
        if (!i || i->get() != 1)
            fail(n->source(), "schema", "this cvm reads schema 1; update cvm or the registry");
    }

    const std::string& file() const { return file_; }

private:
    std::string file_;
};

toml::table parse_text(const std::string& text, const std::string& file) {
    return parse_toml<RegistryError>(text, file, "");
}

void check_no_duplicate(const Reader& r, std::map<std::string, size_t>& seen,
                        const std::string& what, const Version& v, const toml::table& t) {
    auto [it, inserted] = seen.emplace(v.str(), t.source().begin.line);
    if (!inserted)
        r.fail(t.source(), what + ".version",
               v.str() + " appears twice (first at line " + std::to_string(it->second) + ")");
}

void read_cuda(const std::string& text, const std::string& file, Registry& reg) {
    Reader r(file);
    toml::table root = parse_text(text, file);
    r.check_keys(root, "", {"schema", "minor_compat", "release"});
    r.check_schema(root);
    read_cuda_tables(root, file, reg);
}

void read_cudnn(const std::string& text, const std::string& file, Registry& reg) {
    Reader r(file);
    toml::table root = parse_text(text, file);
    r.check_keys(root, "", {"schema", "library_set", "release"});
    r.check_schema(root);
    read_cudnn_tables(root, file, reg);
}

} // namespace

void read_cuda_tables(const toml::table& root, const std::string& file, Registry& reg) {
    Reader r(file);
    for (const toml::table* t : r.tables(root, "", "minor_compat")) {
        r.check_keys(*t, "minor_compat", {"major", "driver_linux", "driver_windows", "source"});
        MinorCompat mc;
        mc.major = r.small_uint(*t, "minor_compat", "major");
        auto lin = r.opt_driver(*t, "minor_compat", "driver_linux");
        if (!lin) r.fail(t->source(), "minor_compat.driver_linux", "missing");
        mc.driver_linux = *lin;
        mc.driver_windows = r.opt_driver(*t, "minor_compat", "driver_windows");
        mc.source = r.string(*t, "minor_compat", "source");
        for (const auto& other : reg.minor_compat)
            if (other.major == mc.major)
                r.fail(t->source(), "minor_compat.major",
                       "CUDA " + std::to_string(mc.major) + " appears twice");
        reg.minor_compat.push_back(std::move(mc));
    }

    std::map<std::string, size_t> seen;
    for (const toml::table* t : r.tables(root, "", "release")) {
        const std::string w = "release";
        r.check_keys(*t, w,
                     {"version", "date", "manifest", "cudart", "nvcc", "driver_linux",
                      "driver_windows", "installer_linux", "installer_windows",
                      "installer_linux_sha256", "installer_source", "source", "inferred"});
        CudaRelease c;
        c.version = r.version(*t, w, "version", 3, 3);
        check_no_duplicate(r, seen, w, c.version, *t);
        c.date = r.opt_string(*t, w, "date").value_or("");
        c.manifest = r.opt_string(*t, w, "manifest").value_or("");
        c.cudart = r.opt_version(*t, w, "cudart", 3, 4);
        c.nvcc = r.opt_version(*t, w, "nvcc", 3, 4);
        c.driver_linux = r.opt_driver(*t, w, "driver_linux");
        c.driver_windows = r.opt_driver(*t, w, "driver_windows");
        c.installer_linux = r.opt_string(*t, w, "installer_linux").value_or("");
        c.installer_windows = r.opt_string(*t, w, "installer_windows").value_or("");
        c.installer_linux_sha256 = r.opt_string(*t, w, "installer_linux_sha256").value_or("");
        c.installer_source = r.opt_string(*t, w, "installer_source").value_or("");
        if (!c.installer_linux_sha256.empty() && c.installer_linux_sha256.size() != 64)
            r.fail(t->source(), "installer_linux_sha256", "not a SHA-256 in hex (64 digits)");
        c.source = r.string(*t, w, "source");
        c.inferred = r.strings(*t, w, "inferred");
        reg.cuda.push_back(std::move(c));
    }
    std::sort(reg.cuda.begin(), reg.cuda.end(),
              [](const CudaRelease& a, const CudaRelease& b) { return a.version < b.version; });
    std::sort(reg.minor_compat.begin(), reg.minor_compat.end(),
              [](const MinorCompat& a, const MinorCompat& b) { return a.major < b.major; });
}

void read_cudnn_tables(const toml::table& root, const std::string& file, Registry& reg) {
    Reader r(file);
    for (const toml::table* t : r.tables(root, "", "library_set")) {
        r.check_keys(*t, "library_set", {"major", "sublibraries", "source"});
        CudnnLibrarySet s;
        s.major = r.small_uint(*t, "library_set", "major");
        s.sublibraries = r.strings(*t, "library_set", "sublibraries");
        s.source = r.string(*t, "library_set", "source");
        for (const auto& other : reg.cudnn_library_sets)
            if (other.major == s.major)
                r.fail(t->source(), "library_set.major",
                       "cuDNN " + std::to_string(s.major) + " appears twice");
        reg.cudnn_library_sets.push_back(std::move(s));
    }

    std::map<std::string, size_t> seen;
    for (const toml::table* t : r.tables(root, "", "release")) {
        const std::string w = "release";
        r.check_keys(*t, w, {"version", "date", "manifest", "source", "inferred", "build"});
        CudnnRelease c;
        c.version = r.version(*t, w, "version", 4, 4);
        check_no_duplicate(r, seen, w, c.version, *t);
        c.date = r.opt_string(*t, w, "date").value_or("");
        c.manifest = r.opt_string(*t, w, "manifest").value_or("");
        c.source = r.string(*t, w, "source");
        c.inferred = r.strings(*t, w, "inferred");
        for (const toml::table* b : r.tables(*t, "release.", "build")) {
            const std::string wb = "release.build";
            r.check_keys(*b, wb, {"cuda", "supports", "linux_archives", "windows_archives"});
            CudnnBuild build;
            build.cuda = r.version(*b, wb, "cuda", 1, 2);
            auto range = r.strings(*b, wb, "supports");
            const toml::node* sn = b->get("supports");
            if (!sn)
                r.fail(b->source(), wb + ".supports", "missing (expected [\"11.0\", \"11.2\"])");
            std::optional<Version> lo, hi;
            if (range.size() == 2) {
                lo = parse_version(range[0], 2, 2);
                hi = parse_version(range[1], 2, 2);
            }
            if (!lo || !hi || *hi < *lo)
                r.fail(sn->source(), wb + ".supports",
                       "expected [oldest, newest] CUDA minors, e.g. [\"11.0\", \"11.2\"]");
            build.supports_min = *lo;
            build.supports_max = *hi;
            build.linux_archives = r.strings(*b, wb, "linux_archives");
            build.windows_archives = r.strings(*b, wb, "windows_archives");
            for (const auto& other : c.builds)
                if (other.cuda == build.cuda)
                    r.fail(b->source(), wb + ".cuda",
                           "variant cuda" + build.cuda.str() + " appears twice in " +
                               c.version.str());
            c.builds.push_back(std::move(build));
        }
        if (c.builds.empty())
            r.fail(t->source(), w + ".build", c.version.str() + " has no [[release.build]]");
        reg.cudnn.push_back(std::move(c));
    }
    std::sort(reg.cudnn.begin(), reg.cudnn.end(),
              [](const CudnnRelease& a, const CudnnRelease& b) { return a.version < b.version; });
}

namespace {

void read_frameworks(const std::string& text, const std::string& file, Registry& reg) {
    Reader r(file);
    toml::table root = parse_text(text, file);
    r.check_keys(root, "", {"schema", "framework"});
    r.check_schema(root);

    std::map<std::string, size_t> seen;
    for (const toml::table* t : r.tables(root, "", "framework")) {
        const std::string w = "framework";
        r.check_keys(*t, w,
                     {"name", "version", "date", "bundles_cudnn", "windows_gpu", "source",
                      "confidence", "inferred", "build"});
        FrameworkRelease f;
        f.name = r.string(*t, w, "name");
        if (f.name != "pytorch" && f.name != "tensorflow")
            r.fail(t->get("name")->source(), w + ".name",
                   "\"" + printable(f.name) + "\" is not one of pytorch, tensorflow");
        f.version = r.version(*t, w, "version", 2, 3);
        auto [it, inserted] = seen.emplace(f.name + " " + f.version.str(), t->source().begin.line);
        if (!inserted)
            r.fail(t->source(), w + ".version",
                   f.name + " " + f.version.str() + " appears twice (first at line " +
                       std::to_string(it->second) + ")");
        f.date = r.opt_string(*t, w, "date").value_or("");
        f.bundles_cudnn = r.boolean(*t, w, "bundles_cudnn", std::nullopt);
        f.windows_gpu = r.boolean(*t, w, "windows_gpu", false);
        f.source = r.string(*t, w, "source");
        if (auto conf = r.opt_string(*t, w, "confidence")) {
            if (*conf != "inferred" && *conf != "confirmed")
                r.fail(t->get("confidence")->source(), w + ".confidence",
                       "expected \"inferred\" or \"confirmed\"");
            f.confirmed = *conf == "confirmed";
        }
        f.inferred = r.strings(*t, w, "inferred");
        for (const toml::table* b : r.tables(*t, "framework.", "build")) {
            const std::string wb = "framework.build";
            r.check_keys(*b, wb, {"tag", "cuda", "cuda_full", "cudnn"});
            FrameworkBuild fb;
            fb.tag = r.opt_string(*b, wb, "tag").value_or("");
            fb.cuda = r.version(*b, wb, "cuda", 2, 2);
            fb.cuda_full = r.opt_version(*b, wb, "cuda_full", 3, 3);
            fb.cudnn = r.version(*b, wb, "cudnn", 2, 4);
            f.builds.push_back(std::move(fb));
        }
        if (f.builds.empty())
            r.fail(t->source(), w + ".build",
                   f.name + " " + f.version.str() + " has no [[framework.build]]");
        reg.frameworks.push_back(std::move(f));
    }
    std::sort(reg.frameworks.begin(), reg.frameworks.end(),
              [](const FrameworkRelease& a, const FrameworkRelease& b) {
                  if (a.name != b.name) return a.name < b.name;
                  return a.version < b.version;
              });
}

std::string read_file(const std::filesystem::path& p) {
    // Whole, bounded, and never waiting on a FIFO.
    auto read = cvm::platform::read_whole_file(p.u8string(), std::size_t(16) << 20);
    if (!read.text)
        throw RegistryError(p.u8string() +
                            (read.too_large ? ": larger than 16 MiB, not a registry file"
                                            : ": cannot read the registry file") +
                            "; reinstall cvm or point "
                            "CVM_REGISTRY_DIR at a folder holding cuda.toml, cudnn.toml and "
                            "frameworks.toml");
    return std::move(*read.text);
}

} // namespace

Registry parse_registry(const RegistryTexts& texts, const std::filesystem::path& origin) {
    Registry reg;
    reg.dir = origin;
    read_cuda(texts.cuda_toml, (origin / "cuda.toml").string(), reg);
    read_cudnn(texts.cudnn_toml, (origin / "cudnn.toml").string(), reg);
    read_frameworks(texts.frameworks_toml, (origin / "frameworks.toml").string(), reg);
    return reg;
}

Registry load_registry(const std::filesystem::path& dir) {
    RegistryTexts texts;
    texts.cuda_toml = read_file(dir / "cuda.toml");
    texts.cudnn_toml = read_file(dir / "cudnn.toml");
    texts.frameworks_toml = read_file(dir / "frameworks.toml");
    return parse_registry(texts, dir);
}

} // namespace cvm::registry
