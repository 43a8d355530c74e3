#include "project/lockfile.h"

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <system_error>

#include <toml++/toml.h>

#include "spec/combination_name.h"
#include "spec/redist_platform.h"
#include "project/selection.h"
#include "text/toml_input.h"
#include "text/toml_output.h"
#include "config/url_credentials.h"
#include "platform/platform.h"

namespace cvm {

namespace {

bool is_sha256(const std::string& s) {
    return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

// ---- mapping the TOML tree (parsed by toml++) to a Lockfile ----

const char* type_name(const toml::node& n) {
    switch (n.type()) {
    case toml::node_type::string:
        return "a string";
    case toml::node_type::integer:
        return "an integer";
    case toml::node_type::floating_point:
        return "a number";
    case toml::node_type::boolean:
        return "a boolean";
    case toml::node_type::array:
        return n.is_array_of_tables() ? "an array of tables" : "an array";
    case toml::node_type::table:
        return "a table";
    default:
        return "a date or time";
    }
}

class LockReader {
public:
    explicit LockReader(std::string origin) : origin_(std::move(origin)) {}

    [[noreturn]] void fail(const toml::node& at, const std::string& why) const {
        throw LockfileError(origin_ + ":" + std::to_string(at.source().begin.line) + ": " + why +
                            "; run `cvm lock` to write it again");
    }
    const toml::node* get(const toml::table& table, const std::string& key, toml::node_type type,
                          bool required, const std::string& where) const {
        const toml::node* v = table.get(key);
        if (!v) {
            if (required) fail(table, where + " has no '" + key + "'");
            return nullptr;
        }
        if (v->type() != type) {
            const char* want = type == toml::node_type::string    ? "a string"
                               : type == toml::node_type::integer ? "an integer"
                               : type == toml::node_type::array   ? "an array"
                                                                  : "a table";
            fail(*v, where + " " + key + " is " + type_name(*v) + ", expected " + want);
        }
        return v;
    }
    std::string string_of(const toml::table& table, const std::string& key, bool required,
                          const std::string& where) const {
        const toml::node* v = get(table, key, toml::node_type::string, required, where);
        return v ? v->as_string()->get() : std::string();
    }

    LockedToolchain toolchain(const toml::table& t, Kind kind) const {
        std::string where = std::string("[") + kind_dir(kind) + "]";
        LockedToolchain tc;
        tc.kind = kind;
        tc.id = string_of(t, "id", true, where);
        // A toolkit's name (import --as) is an imported toolkit's, with its release beside it.
        const bool named = kind == Kind::Cuda && is_toolkit_name(tc.id);
        if (!named && !parse_entry_id(kind, tc.id))
            fail(*t.get("id"), where + " id '" + printable(tc.id) + "' is not a " +
                                   (kind == Kind::Cuda    ? "toolkit id like 11.2.2"
                                    : kind == Kind::Cudnn ? "cuDNN build id like 8.1.0.77-cuda11.2"
                                                          : "NCCL build id like 2.21.5-cuda12.4"));
        std::string source = string_of(t, "source", true, where);
        if (source != "installed" && source != "imported")
            fail(*t.get("source"), where + " source must be \"installed\" or \"imported\"");
        tc.imported = source == "imported";
        if (kind == Kind::Cuda) {
            std::string release = string_of(t, "version", named, where);
            auto v = parse_toolkit_id(release);
            if (named && !tc.imported)
                fail(*t.get("source"), where + " the toolkit named " + tc.id +
                                           " is an import's name (cvm import --as), so its source is "
                                           "\"imported\"; run `cvm lock` again to write the file anew");
            if (!release.empty() && !v)
                fail(*t.get("version"), where + " version '" + printable(release) +
                                            "' is not a toolkit release like 11.8.0; run `cvm lock` "
                                            "again to write the file anew");
            tc.release = v ? *v : *parse_toolkit_id(tc.id);
        }
        tc.platform = string_of(t, "platform", false, where);
        if (const toml::node* c = get(t, "components", toml::node_type::array, false, where)) {
            for (const toml::node& item : *c->as_array()) {
                if (!item.is_string() || item.as_string()->get().empty())
                    fail(item, where + " components must be names");
                tc.components.push_back(item.as_string()->get());
            }
        }
        if (const toml::node* a = t.get("archive")) {
            std::string w = std::string("[[") + kind_dir(kind) + ".archive]]";
            if (!a->is_array_of_tables())
                fail(*a, where + " archive is " + type_name(*a) + ", expected " + w + " tables");
            for (const toml::node& item : *a->as_array()) {
                const toml::table& at = *item.as_table();
                LockedArchive la;
                la.name = string_of(at, "name", true, w);
                la.url = string_of(at, "url", false, w);
                la.sha256 = string_of(at, "sha256", true, w);
                if (!is_sha256(la.sha256))
                    fail(*at.get("sha256"), w + " sha256 of " + printable(la.name) +
                                                " is not 64 lower-case hex digits");
                std::string trust = string_of(at, "trust", false, w);
                if (!trust.empty() && trust != "first-use")
                    fail(*at.get("trust"), w + " trust of " + printable(la.name) +
                                               " must be \"first-use\" (or absent)");
                la.first_use = trust == "first-use";
                tc.archives.push_back(std::move(la));
            }
        }
        if (tc.imported && !tc.archives.empty()) fail(t, where + " is imported but lists archives");
        return tc;
    }

    Lockfile lock(const toml::table& root) const {
        Lockfile lock;
        const toml::node* version = get(root, "lock_version", toml::node_type::integer, true, "cvm.lock");
        std::int64_t v = version->as_integer()->get();
        if (v > kLockVersion)
            throw LockfileError(origin_ + ":" + std::to_string(version->source().begin.line) +
                                ": lock_version " + std::to_string(v) +
                                " was written by a newer cvm; upgrade cvm to read it");
        if (v < 1) fail(*version, "lock_version must be 1");
        lock.lock_version = static_cast<int>(v);
        lock.spec = string_of(root, "spec", false, "cvm.lock");
        const toml::node* cuda = get(root, "cuda", toml::node_type::table, true, "cvm.lock");
        lock.cuda = toolchain(*cuda->as_table(), Kind::Cuda);
        if (const toml::node* dnn = get(root, "cudnn", toml::node_type::table, false, "cvm.lock")) {
            lock.cudnn = toolchain(*dnn->as_table(), Kind::Cudnn);
            auto id = parse_cudnn_id(lock.cudnn->id);
            if (!id->serves(lock.cuda.release))
                fail(*dnn, "cuDNN " + lock.cudnn->id + " is not built for CUDA " + lock.cuda.id);
        }
        if (const toml::node* nccl = get(root, "nccl", toml::node_type::table, false, "cvm.lock")) {
            lock.nccl = toolchain(*nccl->as_table(), Kind::Nccl);
            if (!parse_nccl_id(lock.nccl->id)->serves(lock.cuda.release))
                fail(*nccl, "NCCL " + lock.nccl->id + " is not built for CUDA " + lock.cuda.id);
        }
        if (const toml::node* active = root.get("active")) {
            if (!active->is_string() || active->as_string()->get() != lock.active())
                fail(*active, "active does not match the [cuda], [cudnn] and [nccl] ids (" +
                                  lock.active() + ")");
        }
        return lock;
    }

private:
    std::string origin_;
};

void write_toolchain(std::ostream& out, const LockedToolchain& tc) {
    const char* kind = kind_dir(tc.kind);
    out << "\n[" << kind << "]\n";
    out << "id = " << toml_basic_string(tc.id) << "\n";
    out << "source = " << toml_basic_string(tc.imported ? "imported" : "installed") << "\n";
    if (tc.kind == Kind::Cuda && !parse_toolkit_id(tc.id)) // a name: its release beside it
        out << "version = " << toml_basic_string(tc.release.str()) << "\n";
    if (!tc.platform.empty()) out << "platform = " << toml_basic_string(tc.platform) << "\n";
    if (!tc.components.empty()) {
        out << "components = [";
        for (size_t i = 0; i < tc.components.size(); ++i)
            out << (i ? ", " : "") << toml_basic_string(tc.components[i]);
        out << "]\n";
    }
    if (tc.imported) {
        out << "# imported from a folder: no archive is known, so `cvm install --locked` cannot\n"
               "# fetch it; import the same "
            << (tc.kind == Kind::Cuda    ? "toolkit"
                : tc.kind == Kind::Cudnn ? "cuDNN build"
                                         : "NCCL build")
            << " on each machine\n";
        return;
    }
    if (tc.archives.empty())
        out << "# installed without a recorded archive: `cvm install --locked` cannot fetch it\n";
    for (const auto& a : tc.archives) {
        out << "\n[[" << kind << ".archive]]\n";
        out << "name = " << toml_basic_string(a.name) << "\n";
        if (!a.url.empty()) out << "url = " << toml_basic_string(a.url) << "\n";
        out << "sha256 = " << toml_basic_string(a.sha256) << "\n";
        if (a.first_use) out << "trust = \"first-use\"  # no public source gives this sum\n";
    }
}

std::string joined(const std::vector<std::string>& v) {
    if (v.empty()) return "(none)";
    std::string s;
    for (const auto& x : v)
        s += (s.empty() ? "" : ",") + x;
    return s;
}

} // namespace

bool LockedToolchain::reproducible() const {
    if (imported || archives.empty()) return false;
    return std::all_of(archives.begin(), archives.end(),
                       [](const LockedArchive& a) { return !a.url.empty(); });
}

std::string Lockfile::active() const {
    return combination_name(cuda.id, cudnn ? &cudnn->id : nullptr, nccl ? &nccl->id : nullptr);
}

std::vector<const LockedToolchain*> Lockfile::toolchains() const {
    std::vector<const LockedToolchain*> out{&cuda};
    if (cudnn) out.push_back(&*cudnn);
    if (nccl) out.push_back(&*nccl);
    return out;
}

std::string lockable_source(const std::string& url) {
    auto starts = [&](const char* scheme) { return url.rfind(scheme, 0) == 0; };
    if (starts("https://") || starts("http://"))
        return without_url_credentials(url); // never a password
    // A folder mirror (file://<dir>/<product>/redist/...) stands for NVIDIA's site: the lock
    // names that, and `cvm install --locked` fetches it through CVM_MIRROR like any other.
    if (starts("file://")) {
        std::string nvidia = mirrored_url(url, std::string(kNvidiaDownloadBase));
        if (nvidia != url) return nvidia;
    }
    return {}; // a local file: its path means nothing on another machine
}

LockedToolchain locked_toolchain_of(const Entry& e) {
    LockedToolchain tc;
    tc.kind = e.kind;
    tc.id = e.id;
    if (e.kind == Kind::Cuda) tc.release = e.version;
    tc.imported = e.imported;
    tc.platform = e.platform;
    tc.components = e.components;
    std::sort(tc.components.begin(), tc.components.end());
    tc.components.erase(std::unique(tc.components.begin(), tc.components.end()),
                        tc.components.end());
    for (const auto& a : e.archives)
        tc.archives.push_back({a.name, lockable_source(a.url), a.sha256, a.first_use});
    std::sort(tc.archives.begin(), tc.archives.end(),
              [](const LockedArchive& a, const LockedArchive& b) {
                  return a.name != b.name ? a.name < b.name : a.sha256 < b.sha256;
              });
    return tc;
}

Lockfile lockfile_of(const Resolved& r, const std::string& spec) {
    Lockfile lock;
    lock.spec = spec;
    lock.cuda = locked_toolchain_of(r.toolkit);
    if (r.cudnn) lock.cudnn = locked_toolchain_of(*r.cudnn);
    if (r.nccl) lock.nccl = locked_toolchain_of(*r.nccl);
    return lock;
}

std::string format_lockfile(const Lockfile& lock) {
    std::ostringstream out;
    out << "# cvm.lock: this project's exact CUDA toolchain, written by `cvm lock`.\n"
           "# `cvm install --locked` installs exactly this, checking every SHA-256, and refuses\n"
           "# any difference. Commit it beside .cudaversion.\n";
    out << "lock_version = " << lock.lock_version << "\n";
    if (!lock.spec.empty()) out << "spec = " << toml_basic_string(lock.spec) << "\n";
    out << "active = " << toml_basic_string(lock.active()) << "\n";
    write_toolchain(out, lock.cuda);
    if (lock.cudnn) write_toolchain(out, *lock.cudnn);
    if (lock.nccl) write_toolchain(out, *lock.nccl);
    return out.str();
}

Lockfile parse_lockfile(std::string_view text, const std::string& origin) {
    toml::table root = parse_toml<LockfileError>(text, origin, "; run `cvm lock` to write it again");
    return LockReader(origin).lock(root);
}

Lockfile read_lockfile(const fs::path& file) {
    // Bounded and without blocking: a cloned project's cvm.lock may be a link to /dev/zero or a
    // FIFO.
    platform::FileRead read = platform::read_whole_file(file.u8string(), 1u << 20);
    if (read.too_large)
        throw LockfileError(file.u8string() +
                            " is larger than 1 MiB, not a cvm.lock; remove it and run `cvm lock` "
                            "in the project");
    if (read.error == ELOOP)
        throw LockfileError(file.u8string() +
                            " is a link that leads nowhere (a loop); remove it and run `cvm lock` "
                            "in the project");
    if (read.error)
        throw LockfileError("cannot read " + file.u8string() + ": " +
                            platform::error_text(read.error) +
                            "; run `cvm lock` in the project to write it");
    if (!read.text)
        throw LockfileError(file.u8string() + " is " + platform::file_type_text(file) +
                            ", not a cvm.lock; remove it and run `cvm lock` in the project");
    try {
        return parse_lockfile(*read.text, file.u8string());
    } catch (const LockfileError&) {
        // A project's cvm.lock linking to someone's secrets: what is wrong, never its text.
        std::error_code ec;
        if (fs::is_symlink(fs::symlink_status(file, ec)))
            throw LockfileError(
                file.u8string() +
                " is a link to a file that is not a cvm.lock (its text is not shown); remove the "
                "link and run `cvm lock` in the project");
        throw;
    }
}

void write_lockfile(const fs::path& file, const Lockfile& lock) {
    platform::write_file_atomically(file, format_lockfile(lock));
}

fs::path lockfile_path_for(const fs::path& version_file) {
    return version_file.parent_path() / kLockFileName;
}

std::optional<fs::path> find_lockfile(const fs::path& cwd) {
    auto project = find_project_file(cwd);
    if (!project) return std::nullopt;
    return lockfile_path_for(*project);
}

std::vector<std::string> lock_differences(const LockedToolchain& locked, const Entry& installed) {
    std::vector<std::string> out;
    LockedToolchain here = locked_toolchain_of(installed);
    std::string what = std::string(kind_dir(locked.kind)) + " " + locked.id;
    if (here.kind != locked.kind || here.id != locked.id)
        out.push_back(what + ": locked, but " + kind_dir(here.kind) + " " + here.id + " is here");
    if (!locked.platform.empty() && !here.platform.empty() && locked.platform != here.platform)
        out.push_back(what + ": locked for " + locked.platform + ", here for " + here.platform);
    if (locked.imported) return out; // nothing else is known about a locked import
    if (here.imported) {
        out.push_back(what + ": locked as installed from archives, here imported from " +
                      installed.path.u8string() +
                      " (its files cannot be checked against the "
                      "locked SHA-256 sums)");
        return out;
    }
    std::vector<std::string> lc = locked.components;
    std::sort(lc.begin(), lc.end());
    lc.erase(std::unique(lc.begin(), lc.end()), lc.end());
    if (lc != here.components)
        out.push_back(what + ": components locked " + joined(lc) + ", here " +
                      joined(here.components));
    for (const auto& a : locked.archives) {
        auto it = std::find_if(here.archives.begin(), here.archives.end(),
                               [&](const LockedArchive& h) { return h.name == a.name; });
        if (it == here.archives.end())
            out.push_back(what + ": archive " + a.name + " is locked but not installed here");
        else if (it->sha256 != a.sha256)
            out.push_back(what + ": archive " + a.name + " locked with sha256 " + a.sha256 +
                          ", installed here from sha256 " + it->sha256);
    }
    for (const auto& h : here.archives) {
        bool locked_too = std::any_of(locked.archives.begin(), locked.archives.end(),
                                      [&](const LockedArchive& a) { return a.name == h.name; });
        if (!locked_too)
            out.push_back(what + ": archive " + h.name + " is installed here but not locked");
    }
    return out;
}

std::string mirrored_url(const std::string& url, const std::optional<std::string>& mirror) {
    if (!mirror || mirror->empty()) return url;
    // <base>/<product>/redist/<relative path>: the shape of NVIDIA's site and of every mirror
    // (<base>/redist/cudnn/v<X.Y.Z>/<archive> for the cuDNN releases before the manifests,
    // <base>/redist/nccl/v<X.Y.Z>/<archive> for NCCL).
    size_t at = std::string::npos;
    for (const char* product :
         {"/cuda/redist/", "/cudnn/redist/", "/redist/cudnn/", "/redist/nccl/"}) {
        size_t p = url.find(product);
        if (p != std::string::npos && p < at) at = p;
    }
    if (at == std::string::npos || url.find("://") == std::string::npos) return url;
    std::string base = *mirror;
    while (!base.empty() && base.back() == '/')
        base.pop_back();
    return base + url.substr(at);
}

} // namespace cvm
