#include "layouts/cudnn_layouts.h"

#include <algorithm>
#include <system_error>

#include "layouts/cudnn_cuda_major.h"
#include "layouts/folder_facts.h"
#include "text/pattern.h"
#include "layouts/wheel_record.h"

namespace cvm {

bool built_per_major(const Version& cudnn) { return cudnn.major() > 8 || (cudnn.major() == 8 && cudnn.minor() >= 3); }

Version cudnn_variant_for(const Version& cudnn, const Version& cuda) {
    if (built_per_major(cudnn) || cuda.parts.size() < 2) return Version{{cuda.major()}};
    return Version{{cuda.major(), cuda.minor()}};
}

namespace {

// What every imported cuDNN entry holds; the caller adds its folders (and origin, stamp).
Entry imported_cudnn(const Version& version, const Version& cuda, const fs::path& dir, platform::Os os,
                     const std::string& how, const std::string& warning) {
    Entry e;
    e.kind = Kind::Cudnn;
    e.version = version;
    e.cuda = cuda;
    e.id = CudnnId{e.version, e.cuda}.str();
    e.imported = true;
    e.path = dir;
    e.platform = os == platform::Os::Windows ? "windows-x86_64" : "linux-x86_64";
    e.note = how + (warning.empty() ? "" : "; warning: " + warning);
    return e;
}

Version first3(const Version& v) {
    Version out = v;
    if (out.parts.size() > 3) out.parts.resize(3);
    return out;
}

Version variant_for(const Version& cudnn, const Version& cuda) { return cudnn_variant_for(cudnn, cuda); }

// "libcudnn_ops.so.9.14.0" -> ("libcudnn_ops", 9.14.0). Only names with 3 numbers say a release.
struct LibName {
    std::string stem;
    Version version;
};
std::optional<LibName> cudnn_lib_name(const std::string& name) {
    if (name.rfind("libcudnn", 0) != 0) return std::nullopt;
    size_t so = name.find(".so.");
    if (so == std::string::npos) return std::nullopt;
    auto v = parse_version(name.substr(so + 4), 3, 3);
    if (!v) return std::nullopt;
    return LibName{name.substr(0, so), *v};
}

// The release a library folder's file names say: the main library's, and the sub-libraries
// that belong to another release (an upgrade that left files behind, or files mixed by hand).
struct LibScan {
    std::optional<Version> main;
    fs::path main_file;
    std::vector<std::string> mismatched;
};
LibScan scan_libs(const fs::path& dir, std::optional<unsigned> major) {
    LibScan scan;
    std::vector<std::pair<std::string, Version>> subs;
    for (const auto& p : sorted_children(dir)) {
        std::string n = p.filename().u8string();
        auto lib = cudnn_lib_name(n);
        if (!lib || (major && lib->version.major() != *major)) continue;
        if (lib->stem == "libcudnn") {
            if (!scan.main || *scan.main < lib->version) {
                scan.main = lib->version;
                scan.main_file = p;
            }
        } else {
            subs.emplace_back(n, lib->version);
        }
    }
    if (scan.main)
        for (const auto& [n, v] : subs)
            if (v != *scan.main) scan.mismatched.push_back(n);
    return scan;
}

std::string mismatch_warning(const fs::path& dir, const Version& main, const std::vector<std::string>& files) {
    std::string list;
    for (const auto& f : files) list += (list.empty() ? "" : ", ") + f;
    return dir.u8string() + " mixes cuDNN releases: the main library is " + main.str() + " but " + list +
           (files.size() == 1 ? " is" : " are") + " not; remove the stale files or reinstall cuDNN";
}

bool has_main_library(const fs::path& dir) {
    for (const auto& p : sorted_children(dir)) {
        std::string n = p.filename().u8string();
        if (n.rfind("libcudnn.so.", 0) == 0) return true;
    }
    return false;
}

// The folders NVIDIA's packages put libraries in: lib/<multiarch> (apt), lib64 (RPM).
std::vector<fs::path> system_lib_dirs(const fs::path& dir) {
    std::vector<fs::path> out;
    for (const auto& p : multiarch_dirs(dir / "lib"))
        if (has_main_library(p)) out.push_back(p);
    if (dir.filename() == "usr" && has_main_library(dir / "lib64")) out.push_back(dir / "lib64");
    return out;
}

std::string cuda_hint(const Version& cudnn) {
    return built_per_major(cudnn) ? "--cuda 12 (the CUDA major it was built for)" : "--cuda 11.2 (the CUDA minor it was built for)";
}

// The CUDA the cuDNN's libraries name (cudnn_cuda_major.h), read when nothing of the layout said
// it (`cuda` empty) or to check --cuda. Sets `cuda` (with the registry's variant of that major for
// a release built per CUDA minor, when it has one) and says so in `how`.
void cuda_from_libraries(const std::vector<fs::path>& libs, const fs::path& where, const Version& version,
                         const std::optional<Version>& cuda_override, std::optional<Version>& cuda,
                         std::string& how, const CudnnReleaseLookup& lookup) {
    if (cuda && !cuda_override) return;
    LibrariesCudaMajor read = cuda_major_of_libraries(libs);
    if (cuda_override) {
        if (read.major && *read.major != cuda_override->major())
            throw CudnnCudaConflict("import: --cuda " + cuda_override->str() + " contradicts the cuDNN in " +
                                    where.u8string() + ": " + read.because() + " (CUDA " +
                                    std::to_string(*read.major) + "); rerun with --cuda " +
                                    std::to_string(*read.major) + " or without --cuda");
        return;
    }
    if (!read.disagreement.empty())
        throw CudnnImportError("import: the libraries of the cuDNN " + version.str() + " in " + where.u8string() +
                               " name CUDA libraries of different majors (" + read.disagreement +
                               "); remove the stale files, or rerun with " + cuda_hint(version));
    if (!read.major) return;
    cuda = Version{{*read.major}};
    how += ", CUDA " + std::to_string(*read.major) + " from its libraries (" + read.because() + ")";
    if (built_per_major(version) || !lookup) return;
    // cuDNN before 8.3 is built per CUDA minor: the registry's only variant of that major.
    std::vector<Version> variants;
    for (const auto& known : lookup(first3(version)))
        for (const auto& v : known.cuda_variants)
            if (v.major() == *read.major && std::find(variants.begin(), variants.end(), v) == variants.end())
                variants.push_back(v);
    if (variants.size() == 1) cuda = variants.front();
}

std::optional<CudnnImport> system_import(const fs::path& dir, platform::Os os,
                                         const std::optional<Version>& cuda_override,
                                         const CudnnReleaseLookup& lookup) {
    auto lib_dirs = system_lib_dirs(dir);
    if (lib_dirs.empty()) return std::nullopt;
    const fs::path& lib_dir = lib_dirs.front();
    // Several majors side by side (libcudnn8 and libcudnn9): the one update-alternatives chose
    // for include/cudnn.h, else the newest.
    std::optional<unsigned> major;
    std::error_code ec;
    fs::path chosen = fs::canonical(dir / "include" / "cudnn.h", ec);
    std::string chosen_name = ec ? "" : chosen.filename().u8string();
    static const Pattern versioned_main(R"(^cudnn_v([0-9]+)\.h$)");
    if (auto m = versioned_main.match(chosen_name)) major = static_cast<unsigned>(std::stoul((*m)[1]));
    LibScan scan = scan_libs(lib_dir, major);
    if (!scan.main && major) scan = scan_libs(lib_dir, std::nullopt);
    if (!scan.main)
        throw CudnnImportError("import: " + lib_dir.u8string() +
                               " has libcudnn but no libcudnn.so.X.Y.Z naming its release; reinstall the cuDNN package");
    const unsigned M = scan.main->major();
    const std::string vsuffix = "_v" + std::to_string(M) + ".h";

    CudnnImport out;
    // Headers: apt versions them (cudnn_v9.h, chosen by update-alternatives as cudnn.h); the
    // root shows them under their usual names. Unversioned ones (RPM) are linked as they are.
    std::vector<fs::path> header_dirs = {dir / "include" / lib_dir.filename(), dir / "include"};
    for (const auto& hdir : header_dirs) {
        for (const auto& p : sorted_children(hdir)) {
            std::string n = p.filename().u8string();
            if (n.rfind("cudnn", 0) != 0 || n.size() <= vsuffix.size() ||
                n.compare(n.size() - vsuffix.size(), vsuffix.size(), vsuffix) != 0)
                continue;
            plan_link(out.plan, "include/" + n.substr(0, n.size() - vsuffix.size()) + ".h", p);
        }
    }
    static const Pattern any_versioned(R"(_v[0-9]+\.h$)");
    for (const auto& hdir : header_dirs)
        plan_files(out.plan, "include", hdir, [](const std::string& n) {
            return n.rfind("cudnn", 0) == 0 && n.size() > 2 && n.compare(n.size() - 2, 2, ".h") == 0 &&
                   !any_versioned.search(n);
        });
    // Libraries: only cuDNN's of the chosen major, so the shared folder's others stay out.
    const std::string so_major = ".so." + std::to_string(M);
    plan_files(out.plan, "lib", lib_dir, [&](const std::string& n) {
        if (n.rfind("libcudnn", 0) != 0) return false;
        size_t at = n.find(so_major);
        if (at != std::string::npos && (at + so_major.size() == n.size() || n[at + so_major.size()] == '.'))
            return true;
        if (n.size() < 3 || n.compare(n.size() - 3, 3, ".so") != 0) return false;
        // libcudnn.so: the development link, when it leads to this major.
        std::error_code e2;
        fs::path target = fs::canonical(lib_dir / n, e2);
        return !e2 && target.filename().u8string().find(so_major) != std::string::npos;
    });

    Version version = *scan.main;
    std::optional<Version> cuda = cuda_override;
    std::string how = "version from " + scan.main_file.u8string();
    // dpkg says the build number and the CUDA variant: libcudnn9-cuda-13 9.14.0.64-1. Read
    // relative to `dir`'s parent (the machine's /), so a test can stage a whole machine.
    fs::path status = dir.parent_path() / "var" / "lib" / "dpkg" / "status";
    if (auto text = platform::read_file(status, std::size_t(64) << 20)) {
        for (const auto& pkg : cudnn_packages_from_dpkg_status(*text)) {
            if (first3(pkg.version) != version) continue;
            version = pkg.version;
            if (!cuda && !pkg.cuda.empty()) cuda = pkg.cuda;
            how = "version from dpkg's package " + pkg.package + " and " + scan.main_file.filename().u8string();
            break;
        }
    }
    cuda_from_libraries(cudnn_library_files(lib_dir, M), lib_dir, version, cuda_override, cuda, how, lookup);
    if (!cuda)
        throw CudnnImportError("import: cannot tell which CUDA the cuDNN " + version.str() + " in " +
                               lib_dir.u8string() +
                               " was built for (no dpkg record of it, and its libraries name no CUDA library); rerun with " +
                               cuda_hint(version));
    if (!scan.mismatched.empty()) out.warning = mismatch_warning(lib_dir, *scan.main, scan.mismatched);

    Entry& e = out.entry;
    e = imported_cudnn(version, variant_for(version, *cuda), dir, os, how, out.warning);
    e.origin = dir;
    e.include_dirs = {"include"};
    e.lib_dirs = {"lib"};
    e.stamp = source_stamp(fs::canonical(scan.main_file, ec));
    return out;
}

// conda's cudnn package: conda-meta/cudnn-9.14.0.64-<build>.json, whose dependencies name the
// CUDA ("cuda-version >=12,<13.0a0", older "cudatoolkit >=11.2,<12").
std::optional<CudnnNameInfo> conda_cudnn(const fs::path& env) {
    for (const auto& p : sorted_children(env / "conda-meta")) {
        std::string n = p.filename().u8string();
        if (n.rfind("cudnn-", 0) != 0) continue;
        size_t dash = n.find('-', 6);
        auto v = parse_version(n.substr(6, dash == std::string::npos ? std::string::npos : dash - 6), 3, 4);
        if (!v) continue;
        CudnnNameInfo info;
        info.version = *v;
        if (auto text = platform::read_file(p)) info.cuda = conda_meta_cuda(*text);
        return info;
    }
    return std::nullopt;
}

std::optional<CudnnImport> plain_import(const fs::path& dir, platform::Os os,
                                        const std::optional<Version>& cuda_override,
                                        const std::optional<Version>& toolkit_version,
                                        const std::string& archive_name, bool legacy,
                                        const CudnnReleaseLookup& lookup) {
    FolderFacts facts = detect_folder(dir, os, false);
    if (!facts.cudnn) return std::nullopt;
    const CudnnFacts& c = *facts.cudnn;
    Version version = c.version;
    std::optional<Version> cuda = c.cuda;
    std::string how = "version from " + c.evidence;
    auto adopt = [&](const std::optional<CudnnNameInfo>& named, const std::string& what) {
        if (!named || first3(named->version) != first3(version)) return;
        if (version.parts.size() < named->version.parts.size()) version = named->version;
        if (!cuda && named->cuda) cuda = named->cuda;
        how += ", build and CUDA from " + what;
    };
    if (version.parts.size() == 3 && !archive_name.empty())
        adopt(cudnn_info_from_name(archive_name), "the folder name " + archive_name);
    if (version.parts.size() == 3 || !cuda) adopt(conda_cudnn(dir), "conda-meta");
    // An extracted legacy archive in a folder that lost its name: the registry knows the build
    // number, and the variant when the release was built for one CUDA only.
    if (legacy && lookup && (version.parts.size() == 3 || !cuda)) {
        auto known = lookup(first3(version));
        if (known.size() == 1) {
            if (version.parts.size() == 3) {
                version = known.front().version;
                how += ", build number from the registry";
            }
            if (!cuda && known.front().cuda_variants.size() == 1) {
                cuda = known.front().cuda_variants.front();
                how += ", CUDA from the registry (its only build)";
            }
        }
    }
    // cuDNN copied into a toolkit: built for that toolkit's CUDA.
    if (!cuda && !cuda_override && toolkit_version) cuda = toolkit_version;
    std::vector<fs::path> libs;
    for (const auto* folders : {&c.lib_dirs, &c.bin_dirs})
        for (const auto& folder : *folders) {
            auto found = cudnn_library_files(dir / fs::u8path(folder), version.major());
            libs.insert(libs.end(), found.begin(), found.end());
        }
    cuda_from_libraries(libs, dir, version, cuda_override, cuda, how, lookup);
    if (cuda_override) cuda = cuda_override;
    if (!cuda)
        throw CudnnImportError("import: cannot tell which CUDA the cuDNN " + version.str() + " in " + dir.u8string() +
                               " was built for (neither its folder name, the registry nor its libraries say); rerun with " +
                               cuda_hint(version));
    CudnnImport out;
    fs::path main_file;
    for (const auto& lib : c.lib_dirs) {
        LibScan scan = scan_libs(dir / fs::u8path(lib), version.major());
        if (!scan.main) continue;
        main_file = scan.main_file;
        std::vector<std::string> odd = scan.mismatched;
        if (*scan.main != first3(version)) odd.insert(odd.begin(), scan.main_file.filename().u8string());
        if (!odd.empty()) out.warning = mismatch_warning(dir / fs::u8path(lib), first3(version), odd);
        break;
    }
    Entry& e = out.entry;
    e = imported_cudnn(version, variant_for(version, *cuda), dir, os, how, out.warning);
    e.include_dirs = c.include_dirs;
    e.lib_dirs = c.lib_dirs;
    e.bin_dirs = c.bin_dirs;
    e.stamp = source_stamp(fs::u8path(c.evidence));
    return out;
}

bool holds_cudnn(const fs::path& dir, platform::Os os) { return detect_folder(dir, os, false).cudnn.has_value(); }

} // namespace

std::vector<DpkgCudnn> cudnn_packages_from_dpkg_status(std::string_view text) {
    static const Pattern pkg_re(R"(^libcudnn([0-9]+)(-cuda-([0-9]+))?$)");
    static const Pattern ver_re(R"(^([0-9]+\.[0-9]+\.[0-9]+\.[0-9]+)-[^+]*(\+cuda([0-9]+(\.[0-9]+)?))?)");
    std::vector<DpkgCudnn> out;
    for (const auto& p : installed_dpkg_packages(text)) {
        auto pm = pkg_re.match(p.name);
        auto vm = pm ? ver_re.search(p.version) : std::nullopt;
        if (!vm) continue;
        DpkgCudnn d;
        d.package = p.name;
        d.version = *parse_version((*vm)[1], 4, 4);
        std::string cuda = pm->matched(3) ? (*pm)[3] : vm->matched(3) ? (*vm)[3] : "";
        if (auto c = parse_version(cuda, 1, 2)) d.cuda = variant_for(d.version, *c);
        out.push_back(std::move(d));
    }
    return out;
}

bool has_system_cudnn(const fs::path& dir) { return !system_lib_dirs(dir).empty(); }

std::optional<CudnnImport> cudnn_import_of(const fs::path& dir, platform::Os os,
                                           const std::optional<Version>& cuda_override,
                                           const std::optional<Version>& toolkit_version_in_same_folder,
                                           const CudnnReleaseLookup& lookup) {
    // A wheel pip left half-installed is refused before anything links to it.
    for (const fs::path& wheel : {dir / "nvidia" / "cudnn", dir / "cudnn", dir}) {
        if (wheel.filename() != "cudnn" || wheel.parent_path().filename() != "nvidia" || !holds_cudnn(wheel, os)) continue;
        if (auto damage = wheel_folder_damage(wheel.parent_path().parent_path(), wheel, "nvidia_cudnn_cu", true))
            throw CudnnImportError("import: " + *damage);
        break;
    }
    // A wheel reached from above: <site-packages> or <site-packages>/nvidia.
    if (holds_cudnn(dir / "nvidia" / "cudnn", os))
        return plain_import(dir / "nvidia" / "cudnn", os, cuda_override, std::nullopt, "", false, lookup);
    if (dir.filename() == "nvidia" && holds_cudnn(dir / "cudnn", os))
        return plain_import(dir / "cudnn", os, cuda_override, std::nullopt, "", false, lookup);
    // An extracted legacy archive: <whatever>/cuda/{include,lib64} or {bin,include,lib/x64}.
    if (!holds_cudnn(dir, os) && holds_cudnn(dir / "cuda", os))
        return plain_import(dir / "cuda", os, cuda_override, std::nullopt, dir.filename().u8string(), true, lookup);
    if (has_system_cudnn(dir)) return system_import(dir, os, cuda_override, lookup);
    // Its cuda/ folder itself (a toolkit named cuda is not one: it has its own version).
    bool legacy = dir.filename() == "cuda" && !toolkit_version_in_same_folder;
    return plain_import(dir, os, cuda_override, toolkit_version_in_same_folder,
                        legacy ? dir.parent_path().filename().u8string() : std::string(), legacy, lookup);
}

} // namespace cvm
