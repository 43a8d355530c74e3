#include "compat/cudnn_owners.h"

#include "install/installed_files.h"
#include "store/entry_format.h"
#include "install/owner_records.h"
#include "install/sha256.h"
#include "platform/platform.h"

#include <map>
#include <system_error>
#include <utility>

namespace cvm::compat {

namespace fs = std::filesystem;
using install::Sha256;

namespace {

constexpr std::size_t kRecordLimit = std::size_t(64) << 20;

// "libcudnn_ops.so.9.14.0" -> "libcudnn_ops.so", "cudnn_ops64_9.dll" -> "cudnn_ops64_9.dll": the
// library a file is, whatever release its name carries.
std::string library_key(const std::string& name) {
    size_t at = name.find(".so");
    if (at != std::string::npos && (at + 3 == name.size() || name[at + 3] == '.')) return name.substr(0, at + 3);
    return name;
}

bool is_cudnn_name(const std::string& name) {
    return name.rfind("libcudnn", 0) == 0 || name.rfind("cudnn", 0) == 0;
}

std::optional<std::string> digest_of(const fs::path& file, Sha256::Algorithm algorithm) {
    // Each file is hashed once a run (the same library is asked about in two scenarios), unless
    // its size or time changed.
    static std::map<std::string, std::optional<std::string>> cache;
    std::error_code ec;
    auto size = fs::file_size(file, ec);
    auto time = ec ? fs::file_time_type() : fs::last_write_time(file, ec);
    const std::string key = file.u8string() + '\n' + std::to_string(static_cast<int>(algorithm)) + '\n' +
                            std::to_string(size) + '\n' + std::to_string(time.time_since_epoch().count());
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    std::optional<std::string> digest;
    try {
        digest = install::file_digest(file, algorithm);
    } catch (const std::exception&) {
    }
    return cache[key] = digest;
}

std::optional<std::uintmax_t> size_of(const fs::path& file) {
    std::error_code ec;
    auto size = fs::file_size(file, ec);
    if (ec) return std::nullopt;
    return size;
}

std::optional<Version> release_of(const std::string& text) {
    // "9.14.0.64-1", "1:9.14.0.64-1", "2.5.1+cu121": the upstream, public part.
    std::string v = text.substr(text.find(':') == std::string::npos ? 0 : text.find(':') + 1);
    v = v.substr(0, v.find_first_of("-~+"));
    return parse_version(v, 2, 4);
}

// ---- wheels: site-packages/<dist>-<version>.dist-info/RECORD ----

struct WheelFile {
    fs::path path; // absolute
    std::string dist, version, digest, size;
};

const std::vector<WheelFile>& wheel_files(const fs::path& site) {
    static std::map<std::string, std::vector<WheelFile>> cache;
    auto [it, fresh] = cache.try_emplace(site.u8string());
    if (!fresh) return it->second;
    const std::string suffix = ".dist-info";
    for (const auto& entry : platform::folder_names(site.u8string())) {
        if (entry.size() <= suffix.size() || entry.compare(entry.size() - suffix.size(), suffix.size(), suffix) != 0)
            continue;
        std::string stem = entry.substr(0, entry.size() - suffix.size());
        size_t dash = stem.rfind('-');
        if (dash == std::string::npos) continue;
        auto text = platform::read_file(site / entry / "RECORD", kRecordLimit);
        if (!text) continue;
        for (auto& line : install::parse_wheel_record(*text)) {
            fs::path rel = fs::u8path(line.path);
            if (!is_cudnn_name(rel.filename().u8string())) continue;
            it->second.push_back({(site / rel).lexically_normal(), stem.substr(0, dash), stem.substr(dash + 1),
                                  line.digest, line.size});
        }
    }
    return it->second;
}

std::optional<fs::path> site_of(const fs::path& file) {
    for (fs::path dir = file.parent_path(); dir.has_relative_path(); dir = dir.parent_path()) {
        std::string name = dir.filename().u8string();
        if (name == "site-packages" || name == "dist-packages") return dir;
    }
    return std::nullopt;
}

FileOwner wheel_owner(const WheelFile& w) {
    FileOwner o;
    o.kind = FileOwner::Kind::Wheel;
    o.name = w.dist;
    o.version_text = w.version;
    o.version = release_of(w.version);
    o.owned_path = w.path.u8string();
    return o;
}

// Does `file` hold the bytes the RECORD line gives? Its size first, then its sha256.
bool wheel_bytes_match(const fs::path& file, const WheelFile& w) {
    auto size = size_of(file);
    if (!size || (!w.size.empty() && w.size != std::to_string(*size))) return false;
    auto hex = digest_of(file, Sha256::Algorithm::Sha256);
    return hex && install::hex_to_urlsafe_base64(*hex) == w.digest;
}

// ---- dpkg: info/<package>[:arch].list and .md5sums, status ----

struct DpkgFile {
    std::string path, package, version, md5; // md5 empty when md5sums has no line for it
};

const std::vector<DpkgFile>& dpkg_files(const fs::path& dpkg_dir) {
    static std::map<std::string, std::vector<DpkgFile>> cache;
    auto [it, fresh] = cache.try_emplace(dpkg_dir.u8string());
    if (!fresh) return it->second;
    std::map<std::string, std::string> versions; // package -> Version of its status stanza
    if (auto status = platform::read_file(dpkg_dir / "status", kRecordLimit)) {
        std::string package;
        size_t start = 0;
        while (start < status->size()) {
            size_t nl = status->find('\n', start);
            if (nl == std::string::npos) nl = status->size();
            std::string line = status->substr(start, nl - start);
            if (line.empty()) package.clear();
            else if (line.rfind("Package: ", 0) == 0) package = line.substr(9);
            else if (line.rfind("Version: ", 0) == 0 && !package.empty()) versions[package] = line.substr(9);
            start = nl + 1;
        }
    }
    const fs::path info = dpkg_dir / "info";
    for (const auto& entry : platform::folder_names(info.u8string())) {
        if (entry.size() < 6 || entry.compare(entry.size() - 5, 5, ".list") != 0) continue;
        if (entry.find("cudnn") == std::string::npos) continue;
        const std::string stem = entry.substr(0, entry.size() - 5);
        const std::string package = stem.substr(0, stem.find(':'));
        auto list = platform::read_file(info / entry, kRecordLimit);
        if (!list) continue;
        std::map<std::string, std::string> md5; // "/usr/lib/..." -> hex
        if (auto sums = platform::read_file(info / (stem + ".md5sums"), kRecordLimit)) {
            size_t start = 0;
            while (start < sums->size()) {
                size_t nl = sums->find('\n', start);
                if (nl == std::string::npos) nl = sums->size();
                // "<md5>  <path relative to />"
                if (nl - start > 34 && (*sums)[start + 32] == ' ')
                    md5["/" + sums->substr(start + 34, nl - start - 34)] = sums->substr(start, 32);
                start = nl + 1;
            }
        }
        const std::string version = versions.count(package) ? versions[package] : std::string();
        size_t start = 0;
        while (start < list->size()) {
            size_t nl = list->find('\n', start);
            if (nl == std::string::npos) nl = list->size();
            std::string path = list->substr(start, nl - start);
            start = nl + 1;
            if (!is_cudnn_name(fs::u8path(path).filename().u8string())) continue;
            auto m = md5.find(path);
            it->second.push_back({path, package, version, m == md5.end() ? std::string() : m->second});
        }
    }
    return it->second;
}

FileOwner dpkg_owner(const DpkgFile& d) {
    FileOwner o;
    o.kind = FileOwner::Kind::Dpkg;
    o.name = d.package;
    o.version_text = d.version;
    o.version = release_of(d.version);
    o.owned_path = d.path;
    return o;
}

// ---- cvm: <layer>/cudnn/<id>/root/... with <id>/entry and <id>/files ----

std::optional<OwnerLookup> cvm_owner(const fs::path& real) {
    for (fs::path dir = real.parent_path(); dir.has_relative_path(); dir = dir.parent_path()) {
        if (dir.filename() != "root") continue;
        const fs::path entry_dir = dir.parent_path();
        if (entry_dir.parent_path().filename() != "cudnn") continue;
        auto text = platform::read_file(entry_dir / "entry");
        if (!text) return std::nullopt;
        try {
            Entry e = parse_entry(*text, entry_dir, (entry_dir / "entry").u8string());
            auto files = read_installed_files(entry_dir);
            if (!files) return std::nullopt;
            const std::string rel = real.lexically_relative(dir).generic_u8string();
            for (const auto& f : *files) {
                if (f.type != InstalledFile::Type::File || f.path != rel) continue;
                FileOwner o;
                o.kind = FileOwner::Kind::Cvm;
                o.name = e.id;
                o.version_text = e.version.str();
                o.version = e.version;
                o.owned_path = real.u8string();
                auto size = size_of(real);
                auto hex = size && *size == f.size ? digest_of(real, Sha256::Algorithm::Sha256) : std::nullopt;
                OwnerLookup out;
                o.hash_checked = true;
                if (hex && install::sha256_equal(*hex, f.sha256)) out.owner = o;
                else out.replaced = o;
                return out;
            }
        } catch (const std::exception&) {
        }
        return std::nullopt;
    }
    return std::nullopt;
}

} // namespace

std::string FileOwner::who() const {
    return kind == Kind::Wheel ? "wheel " + name : kind == Kind::Dpkg ? "dpkg " + name : "cvm " + name;
}

std::string FileOwner::installable_name() const {
    std::string out = name;
    if (kind == Kind::Wheel)
        for (auto& ch : out)
            if (ch == '_') ch = '-';
    return out;
}

std::string FileOwner::describe() const {
    return copy ? who() + ", a copy of " + owned_path : who();
}

std::string FileOwner::reinstall() const {
    switch (kind) {
    case Kind::Wheel:
        return "pip install --force-reinstall --no-deps " + installable_name() + "==" + version_text;
    case Kind::Dpkg:
        return "apt-get install --reinstall " + name;
    case Kind::Cvm:
        return "cvm install --reinstall " + name;
    }
    return {};
}

OwnerRoots machine_owner_roots() {
    OwnerRoots roots;
    if (auto dpkg = platform::get_env("CVM_DPKG_DIR")) roots.dpkg_dir = fs::u8path(*dpkg);
    for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
        auto prefix = platform::get_env(var);
        if (!prefix || prefix->empty()) continue;
        const fs::path lib = fs::u8path(*prefix) / "lib";
        for (const auto& name : platform::folder_names(lib.u8string()))
            if (name.rfind("python", 0) == 0) roots.site_dirs.push_back(lib / name / "site-packages");
        roots.site_dirs.push_back(fs::u8path(*prefix) / "Lib" / "site-packages"); // Windows
    }
    return roots;
}

OwnerLookup owner_of(const fs::path& real, const std::string& given, const OwnerRoots& roots) {
    OwnerLookup out;
    if (auto site = site_of(real)) {
        const fs::path want = real.lexically_normal();
        for (const auto& w : wheel_files(*site)) {
            if (w.path != want) continue;
            FileOwner o = wheel_owner(w);
            o.hash_checked = true;
            if (wheel_bytes_match(real, w)) out.owner = o;
            else out.replaced = o;
            return out;
        }
    }
    if (auto cvm = cvm_owner(real)) return *cvm;
    const auto& debs = dpkg_files(roots.dpkg_dir);
    for (const auto& d : debs) {
        if (d.path != real.u8string() && d.path != given) continue;
        FileOwner o = dpkg_owner(d);
        // The list may name the link the file was found by; md5sums names the real file.
        std::string md5 = d.md5;
        for (const auto& other : debs)
            if (md5.empty() && other.package == d.package && other.path == real.u8string()) md5 = other.md5;
        if (md5.empty()) {
            out.owner = o; // a path the package lists, with no hash to compare
            return out;
        }
        o.hash_checked = true;
        auto hex = digest_of(real, Sha256::Algorithm::Md5);
        if (hex && install::sha256_equal(*hex, md5)) out.owner = o;
        else out.replaced = o;
        return out;
    }
    return out;
}

std::optional<FileOwner> copied_from(const fs::path& real, const OwnerRoots& roots) {
    const std::string key = library_key(real.filename().u8string());
    auto size = size_of(real);
    if (!size) return std::nullopt;
    for (const auto& d : dpkg_files(roots.dpkg_dir)) {
        if (d.md5.empty() || library_key(fs::u8path(d.path).filename().u8string()) != key) continue;
        // The package's own file, when still there, must be of the same size.
        auto theirs = size_of(fs::u8path(d.path));
        if (theirs && *theirs != *size) continue;
        auto hex = digest_of(real, Sha256::Algorithm::Md5);
        if (!hex || !install::sha256_equal(*hex, d.md5)) continue;
        FileOwner o = dpkg_owner(d);
        o.copy = o.hash_checked = true;
        return o;
    }
    std::vector<fs::path> sites = roots.site_dirs;
    if (auto own = site_of(real)) sites.insert(sites.begin(), *own);
    for (const auto& site : sites)
        for (const auto& w : wheel_files(site)) {
            if (w.path == real.lexically_normal() || library_key(w.path.filename().u8string()) != key) continue;
            if (!wheel_bytes_match(real, w)) continue;
            FileOwner o = wheel_owner(w);
            o.copy = o.hash_checked = true;
            return o;
        }
    return std::nullopt;
}

} // namespace cvm::compat
