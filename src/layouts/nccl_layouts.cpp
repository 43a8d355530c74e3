#include "layouts/nccl_layouts.h"

#include <algorithm>
#include <system_error>

#include "binary/nccl_version.h"
#include "layouts/folder_facts.h"
#include "text/pattern.h"
#include "layouts/wheel_record.h"

namespace cvm {

namespace {

// NCCL's own entries of a shared folder, read off the folder: its libraries (libnccl.so.2,
// libnccl_static.a, libnccl_device.ltoir...) and its headers, header folders included (nccl.h,
// nccl_net.h, nccl_device.h with the folder nccl_device/ it includes from).
bool is_nccl_library(const std::string& name) {
    return name.rfind("libnccl", 0) == 0;
}
bool is_nccl_header(const std::string& name) {
    return name.rfind("nccl", 0) == 0;
}


// NCCL_MAJOR / NCCL_MINOR / NCCL_PATCH of nccl.h.
std::optional<Version> header_version(const fs::path& header) {
    auto text = platform::read_file(header, std::size_t(4) << 20);
    if (!text) return std::nullopt;
    static const Pattern re(R"(#define\s+NCCL_(MAJOR|MINOR|PATCH)\s+([0-9]+))");
    unsigned v[3] = {0, 0, 0};
    int found = 0;
    for (const Match& m : re.search_all(*text)) {
        const std::string& key = m[1];
        unsigned n = static_cast<unsigned>(std::stoul(m[2]));
        int at = key == "MAJOR" ? 0 : key == "MINOR" ? 1 : 2;
        if (!(found & (1 << at))) v[at] = n;
        found |= 1 << at;
    }
    if (found != 7) return std::nullopt;
    return Version{{v[0], v[1], v[2]}};
}

// Where one NCCL's files are: its library folder and header folder (empty when it has none).
struct Found {
    fs::path root;    // the folder the import names
    fs::path lib_dir; // holds libnccl.so.2
    fs::path include_dir;
    fs::path library; // the real library file
};

std::optional<Found> look(const fs::path& root, const std::vector<fs::path>& lib_dirs,
                          const std::vector<fs::path>& include_dirs) {
    for (const auto& lib : lib_dirs) {
        fs::path file = nccl_library_in(lib);
        if (file.empty()) continue;
        Found f{root, lib, {}, file};
        for (const auto& inc : include_dirs)
            if (is_file(inc / "nccl.h")) {
                f.include_dir = inc;
                break;
            }
        return f;
    }
    return std::nullopt;
}

// The NCCL of `dir` itself: lib/ or lib64/ (a root of its own, a conda environment, a toolkit),
// or lib/<multiarch>/ with include/ or include/<multiarch>/ (NVIDIA's apt packages).
std::optional<Found> find_here(const fs::path& dir) {
    if (auto f = look(dir, {dir / "lib", dir / "lib64"}, {dir / "include"})) return f;
    for (const auto& m : multiarch_dirs(dir / "lib"))
        if (auto f = look(dir, {m}, {dir / "include" / m.filename(), dir / "include"})) return f;
    return std::nullopt;
}

// A folder holding nothing but NCCL's files (and what packaging puts beside them): it can be the
// entry's root as it is.
bool only_nccl(const fs::path& dir, bool (*mine)(const std::string&)) {
    for (const auto& p : sorted_children(dir)) {
        std::string n = p.filename().u8string();
        if (mine(n) || is_packaging_file(n) || n == "pkgconfig") continue;
        return false;
    }
    return true;
}

// dpkg's record of libnccl2, read relative to the /usr folder's parent (the machine's /), so a
// test can stage a whole machine.
std::optional<DpkgNccl> dpkg_record(const fs::path& usr, const Version& version) {
    fs::path status = usr.parent_path() / "var" / "lib" / "dpkg" / "status";
    auto text = platform::read_file(status, std::size_t(64) << 20);
    if (!text) return std::nullopt;
    for (auto& pkg : nccl_packages_from_dpkg_status(*text))
        if (pkg.version == version) return pkg;
    return std::nullopt;
}

bool plausible_release(const Version& v) {
    return v.major() >= 1 && v.major() <= 99 && v.minor() <= 999 &&
           (v.parts.size() < 3 || v.parts[2] <= 999);
}

bool plausible_cuda(const Version& v) {
    return v.major() >= 7 && v.major() <= 99 && v.minor() <= 99;
}

// A wheel's dist-info beside its nvidia/nccl folder: nvidia_nccl_cu12-2.21.5.dist-info.
std::optional<NcclNameInfo> wheel_record(const fs::path& nccl_dir) {
    if (nccl_dir.filename() != "nccl" || nccl_dir.parent_path().filename() != "nvidia")
        return std::nullopt;
    for (const auto& p : sorted_children(nccl_dir.parent_path().parent_path())) {
        std::string n = p.filename().u8string();
        if (n.rfind("nvidia_nccl_cu", 0) == 0 && n.size() > 10 &&
            n.compare(n.size() - 10, 10, ".dist-info") == 0)
            if (auto info = nccl_info_from_name(n)) return info;
    }
    return std::nullopt;
}

// conda's nccl package: conda-meta/nccl-2.21.5.1-<build>.json, whose dependencies name the CUDA.
std::optional<Version> conda_cuda(const fs::path& env) {
    for (const auto& p : sorted_children(env / "conda-meta")) {
        std::string n = p.filename().u8string();
        if (n.rfind("nccl-", 0) != 0) continue;
        if (auto text = platform::read_file(p, std::size_t(4) << 20))
            if (auto cuda = conda_meta_cuda(*text)) return cuda;
    }
    return std::nullopt;
}

NcclImport import_found(const Found& f, platform::Os os,
                        const std::optional<Version>& cuda_override) {
    const std::string where = f.lib_dir.u8string();
    auto banner = binary::read_nccl_banner_file(f.library.u8string());
    auto header = f.include_dir.empty() ? std::nullopt : header_version(f.include_dir / "nccl.h");
    std::optional<Version> version;
    std::optional<Version> cuda;
    std::string how;
    if (banner) {
        version = Version{{banner->version[0], banner->version[1], banner->version[2]}};
        how = "version from " + f.library.filename().u8string() + " (\"" + banner->text + "\")";
        if (banner->cuda_major) cuda = Version{{banner->cuda_major, banner->cuda_minor}};
    } else if (header) {
        version = header;
        how =
            "version from " + (f.include_dir / "nccl.h").u8string() + " (its library does not say)";
    }
    if (!version)
        throw NcclImportError(
            "import: " + f.library.u8string() +
            " does not say which NCCL it is (no \"NCCL version\" text in it) and no nccl.h "
            "beside it does; reinstall NCCL");
    // No NCCL is 0.x or 9999.x, nor built for a CUDA 9999: a library that says so is not one
    // NVIDIA made, whatever its file is called.
    if (!plausible_release(*version) || (cuda && !plausible_cuda(*cuda)))
        throw NcclImportError("import: " + f.library.u8string() + " says \"" +
                              (banner ? banner->text : "NCCL " + version->str()) +
                              "\", which is no NCCL release; reinstall NCCL");
    NcclImport out;
    if (auto named = nccl_info_from_name(f.root.filename().u8string());
        named && named->version != *version)
        out.warning = "the folder's name says NCCL " + named->version.str() + " but " +
                      f.library.u8string() + " is NCCL " + version->str();
    if (banner && header && *header != *version)
        out.warning += std::string(out.warning.empty() ? "" : "; ") +
                       (f.include_dir / "nccl.h").u8string() + " is NCCL " + header->str() +
                       " but " + f.library.u8string() + " is NCCL " + version->str() +
                       ": programs built here would not match the library; reinstall NCCL";
    // A wheel's record names the release pip installed; a library that says another was put
    // there since (by hand, by another package) and is what programs load.
    if (auto wheel = wheel_record(f.root);
        wheel && banner &&
        (wheel->version != *version || (wheel->cuda && cuda && wheel->cuda->major() != cuda->major())))
        out.warning += std::string(out.warning.empty() ? "" : "; ") + "the wheel's record says NCCL " +
                       wheel->version.str() +
                       (wheel->cuda ? " for CUDA " + wheel->cuda->str() : std::string()) + " but " +
                       f.library.u8string() + " says \"" + banner->text +
                       "\": its files are not the wheel's; reinstall it (pip install "
                       "--force-reinstall nvidia-nccl-cu" +
                       (wheel->cuda ? std::to_string(wheel->cuda->major()) : std::string("XX")) + ")";
    if (cuda && cuda_override && cuda->major() != cuda_override->major())
        throw NcclCudaConflict(
            "import: --cuda " + cuda_override->str() + " contradicts the NCCL in " + where + ": " +
            f.library.filename().u8string() + " says \"" + banner->text + "\"; rerun with --cuda " +
            std::to_string(cuda->major()) + " or without --cuda");
    if (!cuda) {
        if (auto pkg = dpkg_record(f.root, *version); pkg && !pkg->cuda.empty()) {
            cuda = pkg->cuda;
            how += ", CUDA from dpkg's package " + pkg->package;
        } else if (auto wheel = wheel_record(f.root); wheel && wheel->cuda) {
            cuda = wheel->cuda;
            how += ", CUDA from the wheel nvidia_nccl_cu" + wheel->cuda->str();
        } else if (auto conda = conda_cuda(f.root)) {
            cuda = conda;
            how += ", CUDA from conda-meta";
        } else if (cuda_override) {
            cuda = cuda_override;
            how += ", CUDA from --cuda";
        }
    }
    if (!cuda)
        throw NcclImportError(
            "import: cannot tell which CUDA the NCCL " + version->str() + " in " + where +
            " was built for (its library, dpkg, a wheel record and conda-meta do not say); rerun "
            "with --cuda 12 (the CUDA it was built for)");
    Entry& e = out.entry;
    e.kind = Kind::Nccl;
    e.version = *version;
    e.cuda = *cuda;
    e.id = NcclId{e.version, e.cuda}.str();
    e.imported = true;
    e.platform = os == platform::Os::Windows ? "windows-x86_64" : "linux-x86_64";
    e.note = how + (out.warning.empty() ? "" : "; warning: " + out.warning);
    e.stamp = source_stamp(f.library);
    // A wheel pip left half-installed is refused before anything links to it.
    if (f.root.filename() == "nccl" && f.root.parent_path().filename() == "nvidia")
        if (auto damage = wheel_folder_damage(f.root.parent_path().parent_path(), f.root, "nvidia_nccl_cu", true))
            throw NcclImportError("import: " + *damage);
    // Its header folders (nccl_device/) are linked whole: each must be read and stay inside.
    for (const auto& p : f.include_dir.empty() ? std::vector<fs::path>{} : sorted_children(f.include_dir))
        if (is_nccl_header(p.filename().u8string()) && is_dir(p))
            if (auto problem = tree_problem(p, f.root))
                throw NcclImportError("import: NCCL's headers in " + f.include_dir.u8string() + " cannot be taken: " +
                                      *problem + "; reinstall NCCL, or import a copy of its own folder");
    const bool own_lib = only_nccl(f.lib_dir, is_nccl_library);
    const bool own_include = f.include_dir.empty() || only_nccl(f.include_dir, is_nccl_header);
    auto relative = [&](const fs::path& p) {
        std::error_code ec;
        return fs::relative(p, f.root, ec).generic_u8string();
    };
    if (own_lib && own_include && f.lib_dir.parent_path() == f.root) {
        e.path = f.root;
        e.lib_dirs = {relative(f.lib_dir)};
        if (!f.include_dir.empty()) e.include_dirs = {relative(f.include_dir)};
        return out;
    }
    // Shared folders: a root of links to NCCL's own files and folders.
    plan_files(out.plan, "lib", f.lib_dir, [](const std::string& n) { return is_nccl_library(n); });
    if (!f.include_dir.empty())
        plan_files(out.plan, "include", f.include_dir,
                   [](const std::string& n) { return is_nccl_header(n); });
    e.path = f.root;
    e.origin = f.root;
    e.lib_dirs = {"lib"};
    if (!f.include_dir.empty()) e.include_dirs = {"include"};
    return out;
}

} // namespace

bool has_system_nccl(const fs::path& usr) {
    for (const auto& m : multiarch_dirs(usr / "lib"))
        if (!nccl_library_in(m).empty()) return true;
    return false;
}

fs::path nccl_library_in(const fs::path& lib_dir) {
    std::error_code ec;
    fs::path file = fs::canonical(lib_dir / "libnccl.so.2", ec);
    if (!ec && is_file(file)) return file;
    // No libnccl.so.2 link: the newest libnccl.so.2.X.Y.
    fs::path best;
    for (const auto& p : sorted_children(lib_dir)) {
        std::string n = p.filename().u8string();
        if (n.rfind("libnccl.so.2.", 0) == 0 && is_file(p) &&
            (best.empty() || best.filename().u8string() < n))
            best = p;
    }
    if (best.empty()) return best;
    fs::path real = fs::canonical(best, ec);
    return ec ? best : real;
}

std::optional<NcclNameInfo> nccl_info_from_name(std::string_view name) {
    static const Pattern archive(
        R"(^nccl_([0-9]+\.[0-9]+\.[0-9]+)-[0-9]+\+cuda([0-9]+\.[0-9]+)_(x86_64|aarch64|ppc64le)(\.txz|\.tar\.xz)?$)");
    static const Pattern wheel(R"(^nvidia_nccl_cu([0-9]+)-([0-9]+\.[0-9]+\.[0-9]+)([-.].*)?$)");
    const std::string_view s = name;
    NcclNameInfo info;
    if (auto m = archive.match(s)) {
        info.version = *parse_version((*m)[1], 3, 3);
        info.cuda = parse_version((*m)[2], 2, 2);
        std::string arch = (*m)[3];
        info.platform = arch == "x86_64"    ? "linux-x86_64"
                        : arch == "aarch64" ? "linux-sbsa"
                                            : "linux-ppc64le";
        return info;
    }
    if (auto m = wheel.match(s)) {
        auto v = parse_version((*m)[2], 3, 3);
        if (!v) return std::nullopt;
        info.version = *v;
        info.cuda = parse_version((*m)[1], 1, 1);
        if (s.find("x86_64") != std::string::npos) info.platform = "linux-x86_64";
        if (s.find("aarch64") != std::string::npos) info.platform = "linux-sbsa";
        return info;
    }
    return std::nullopt;
}

std::vector<DpkgNccl> nccl_packages_from_dpkg_status(std::string_view text) {
    static const Pattern ver_re(R"(^([0-9]+\.[0-9]+\.[0-9]+)-[^+]*(\+cuda([0-9]+(\.[0-9]+)?))?)");
    std::vector<DpkgNccl> out;
    for (const auto& p : installed_dpkg_packages(text)) {
        if (p.name != "libnccl2") continue;
        auto vm = ver_re.search(p.version);
        if (!vm) continue;
        DpkgNccl d;
        d.package = p.name;
        d.version = *parse_version((*vm)[1], 3, 3);
        if (vm->matched(3))
            if (auto c = parse_version((*vm)[3], 1, 2)) d.cuda = *c;
        out.push_back(std::move(d));
    }
    return out;
}

std::optional<NcclImport> nccl_import_of(const fs::path& dir, platform::Os os,
                                         const std::optional<Version>& cuda_override) {
    if (os == platform::Os::Windows) return std::nullopt;
    // A wheel reached from above: <site-packages> or <site-packages>/nvidia.
    for (const fs::path& wheel : {dir / "nvidia" / "nccl", dir / "nccl"}) {
        if (wheel == dir / "nccl" && dir.filename() != "nvidia") continue;
        if (auto f = find_here(wheel)) return import_found(*f, os, cuda_override);
    }
    if (auto f = find_here(dir)) return import_found(*f, os, cuda_override);
    // The folder an archive was extracted into: one nccl_<version>-1+cuda<M.m>_<arch> inside.
    std::optional<Found> only;
    for (const auto& p : sorted_children(dir)) {
        if (!nccl_info_from_name(p.filename().u8string()) || !is_dir(p)) continue;
        auto f = find_here(p);
        if (!f) continue;
        if (only) return std::nullopt; // several: the user says which
        only = f;
    }
    if (only) return import_found(*only, os, cuda_override);
    return std::nullopt;
}

} // namespace cvm
