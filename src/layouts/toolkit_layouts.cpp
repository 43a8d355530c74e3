// A toolkit import (layouts/toolkit_layouts.h): a self-contained root as it is, or a scattered
// toolkit's assembled root, planned link by link from where its layout keeps the files
// (toolkit_sources), with its version from what the files and records tell.
#include "layouts/toolkit_layouts.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "layouts/toolkit_sources.h"
#include "text/affixes.h"
#include "text/ascii.h"

namespace cvm {

ToolkitIdentity toolkit_identity_from_files(const ToolkitFacts& t) {
    ToolkitIdentity id;
    if (t.release) {
        id.version = t.release;
        id.how = "version from " + t.evidence;
        return id;
    }
    std::optional<Version> mm = t.cuda_h;
    const std::optional<Version>& component = t.cudart ? t.cudart : t.nvcc;
    if (!mm && component) mm = Version{{component->major(), component->minor()}};
    if (!mm) return id;
    unsigned patch = component && component->parts.size() >= 3 ? component->parts[2] : 0;
    id.version = Version{{mm->major(), mm->minor(), patch}};
    id.how = std::string("version from include/cuda.h and the ") + (t.cudart ? "cudart" : "nvcc") +
             " build number (release unknown to the registry)";
    return id;
}

namespace {

// What every imported toolkit entry holds; the caller adds its folders and note.
Entry imported_toolkit(const Version& version, const fs::path& path) {
    Entry e;
    e.kind = Kind::Cuda;
    e.version = version;
    e.id = e.version.str();
    e.imported = true;
    e.path = path;
    return e;
}

bool is_planned(const std::vector<RootLink>& plan, const std::string& rel) {
    return std::any_of(plan.begin(), plan.end(), [&](const RootLink& l) { return l.rel == rel; });
}

// Folders of the toolkit's own (NVIDIA's wheels): their whole trees, as the folders hold
// them (include/cccl/, lib/stubs/, cccl/lib/cmake/...), the libraries both in lib/ (as the
// wheels' nvcc.profile says) and in lib64/ (as a toolkit's root has them).
void plan_own_folders(std::vector<RootLink>& plan, const ToolkitSources& s,
                      const std::string& lib_rel, bool win) {
    auto sub = [&](const char* name) {
        std::vector<fs::path> out;
        for (const auto& d : s.own_dirs)
            if (is_dir(d / name)) out.push_back(d / name);
        return out;
    };
    auto not_cudnn_nccl = [](const std::string& n) {
        return !starts_with(n, "cudnn") && !starts_with(n, "nccl");
    };
    plan_tree(plan, "bin", sub("bin"), [](const std::string&) { return true; });
    plan_tree(plan, "include", sub("include"), not_cudnn_nccl);
    std::vector<fs::path> libs = sub("lib");
    for (const auto& l : sub("lib64"))
        libs.push_back(l);
    plan_tree(plan, lib_rel, libs, not_cudnn_nccl);
    if (!win) plan_tree(plan, "lib", libs, not_cudnn_nccl);
    static const char* const placed[] = {"bin", "include", "lib", "lib64", "nvvm"};
    plan_tree(plan, "", s.own_dirs, [](const std::string& n) {
        return std::find(std::begin(placed), std::end(placed), n) == std::end(placed);
    });
}

// Folders shared with other packages: CUDA's programs, headers and libraries, by the name rules.
void plan_named_files(std::vector<RootLink>& plan, const ToolkitSources& s,
                      const std::string& lib_rel, platform::Os os) {
    for (const auto& b : s.bins)
        plan_files(plan, "bin", b, [&](const std::string& n) { return is_cuda_program(n, os); });
    for (const auto& [inc, shared] : s.includes)
        plan_files(plan, "include", inc, [shared = shared](const std::string& n) {
            if (shared) return is_cuda_header(n);
            return !starts_with(n, "cudnn") &&
                   !starts_with(n, "nccl"); // cuDNN is imported on its own
        });
    for (const auto& l : s.libs) {
        plan_files(plan, lib_rel, l, [&](const std::string& n) { return is_cuda_library(n, os); });
        // The driver's stub for linking without a driver: CUDA::cuda_driver, nvcc -lcuda.
        plan_files(plan, lib_rel + "/stubs", l / "stubs", [&](const std::string& n) {
            return is_cuda_library(n, os) || starts_with(n, "libcuda.so") ||
                   ascii_lower(n) == "cuda.lib";
        });
    }
}

// What the packages' records add beyond the name rules (cupti's include/Openmp/,
// lib64/stubs/libnvidia-ml.so, lib64/pkgconfig/cuda.pc): each file in its place, unless a
// folder above it is linked whole already. Programs stay those the rules pick: Debian's
// bin/gcc beside nvcc is a wrapper that must never come first on PATH.
void plan_recorded_files(std::vector<RootLink>& plan, const ToolkitSources& s) {
    std::set<std::string> taken;
    for (const auto& l : plan)
        taken.insert(l.rel);
    for (const auto& file : s.owned) {
        const std::pair<fs::path, std::string>* best = nullptr;
        for (const auto& pd : s.placed_dirs) {
            auto rel = file.lexically_relative(pd.first);
            if (rel.empty() || *rel.begin() == ".." ||
                (best && pd.first.native().size() <= best->first.native().size()))
                continue;
            best = &pd;
        }
        if (!best) continue;
        std::string rel = file.lexically_relative(best->first).generic_u8string();
        if (!best->second.empty()) rel = best->second + "/" + rel;
        if (starts_with(rel, "bin/")) continue;
        bool covered = false;
        for (size_t slash = rel.find('/'); slash != std::string::npos && !covered;
             slash = rel.find('/', slash + 1))
            covered = taken.count(rel.substr(0, slash)) > 0;
        if (!covered && taken.insert(rel).second) plan.push_back({rel, file});
    }
}

// Whether the plan links a cudart library (not a stub) into lib_rel.
bool plans_cudart(const std::vector<RootLink>& plan, const std::string& lib_rel) {
    return std::any_of(plan.begin(), plan.end(), [&](const RootLink& l) {
        std::string n = fs::u8path(l.rel).filename().u8string();
        return starts_with(l.rel, lib_rel + "/") && l.rel.find("/stubs/") == std::string::npos &&
               (starts_with(n, "libcudart.so") || starts_with(ascii_lower(n), "cudart"));
    });
}

// Wheels ship only libcudart.so.12; find_library(cudart) and -lcudart want libcudart.so.
void plan_bare_sonames(std::vector<RootLink>& plan, const std::string& lib_rel) {
    std::vector<RootLink> extra;
    for (const auto& l : plan) {
        size_t so = l.rel.find(".so.");
        if ((!starts_with(l.rel, lib_rel + "/") && !starts_with(l.rel, "lib/")) ||
            so == std::string::npos)
            continue;
        std::string bare = l.rel.substr(0, so + 3);
        if (!is_planned(plan, bare) &&
            std::none_of(extra.begin(), extra.end(),
                         [&](const RootLink& e) { return e.rel == bare; }))
            extra.push_back({bare, l.target});
    }
    plan.insert(plan.end(), extra.begin(), extra.end());
}

// nvvm/libdevice (and cicc, libnvvm): whole when the layout has the folder, else its parts.
void plan_nvvm(std::vector<RootLink>& plan, const ToolkitSources& s, const std::string& lib_rel,
               bool win) {
    for (const auto& n : s.nvvm_dirs)
        if (is_dir(n / "libdevice")) {
            plan_link(plan, "nvvm", n);
            break;
        }
    if (!is_planned(plan, "nvvm")) {
        plan_link(plan, "nvvm/libdevice", s.libdevice);
        plan_link(plan, "nvvm/bin/" + std::string(win ? "cicc.exe" : "cicc"), s.cicc);
        for (const auto& l : s.libs)
            plan_files(plan, "nvvm/" + lib_rel, l,
                       [](const std::string& n) { return starts_with(n, "libnvvm.so"); });
        for (const auto& [inc, shared] : s.includes)
            plan_link(plan, "nvvm/include/nvvm.h", inc / "nvvm.h");
    }
}

// nvcc finds nvcc.profile beside the path it was run by (not its real path); a profile with
// paths relative to it ($(TOP)/targets/x86_64-linux/include) then needs targets/ here too.
void plan_target_mirror(std::vector<RootLink>& plan, const std::string& target,
                        const std::string& lib_rel) {
    for (const auto& l : plan) {
        if (l.rel != "bin/nvcc.profile") continue;
        auto text = platform::read_file(l.target);
        if (!text || (text->find("$(_TARGET_DIR_)") == std::string::npos &&
                      text->find("/targets/") == std::string::npos))
            break;
        std::vector<RootLink> mirror;
        for (const auto& m : plan) {
            if (starts_with(m.rel, "include/"))
                mirror.push_back({"targets/" + target + "/" + m.rel, m.target});
            if (starts_with(m.rel, lib_rel + "/"))
                mirror.push_back(
                    {"targets/" + target + "/lib/" + m.rel.substr(lib_rel.size() + 1), m.target});
        }
        plan.insert(plan.end(), mirror.begin(), mirror.end());
        break;
    }
}

// The layout's records' versions, with what the files add: include/cuda.h, libcudart's name,
// else what the planned nvcc (`exe`) answers.
ToolkitFacts assembled_facts(const ToolkitSources& s, const std::vector<RootLink>& plan,
                             bool has_nvcc, const std::string& exe, bool win) {
    ToolkitFacts f = s.facts;
    std::vector<fs::path> inc_dirs;
    for (const auto& [inc, shared] : s.includes)
        inc_dirs.push_back(inc);
    for (const auto& inc : inc_dirs)
        if (auto h = platform::read_file(inc / "cuda.h")) {
            if (auto v = toolkit_version_from_cuda_h(*h)) f.cuda_h = v;
            break;
        }
    if (!f.cudart && !win) f.cudart = cudart_from_file_names(s.libs);
    if (!f.release && !f.cudart && !f.nvcc && has_nvcc) {
        auto nvcc = std::find_if(plan.begin(), plan.end(),
                                 [&](const RootLink& l) { return l.rel == "bin/" + exe; });
        if (auto out =
                platform::capture_output(nvcc->target, {nvcc->target.u8string(), "--version"}))
            f.nvcc = nvcc_version_from_output(*out);
    }
    return f;
}

std::optional<ToolkitImport> assemble_toolkit(const fs::path& dir, const ToolkitSources& s,
                                              platform::Os os, const IdentifyToolkit& identify) {
    const bool win = os == platform::Os::Windows;
    const std::string exe = win ? "nvcc.exe" : "nvcc";
    const std::string lib_rel = win ? "lib/x64" : "lib64";
    std::vector<RootLink> plan;
    if (!s.own_dirs.empty())
        plan_own_folders(plan, s, lib_rel, win);
    else
        plan_named_files(plan, s, lib_rel, os);
    plan_recorded_files(plan, s);
    bool has_nvcc = is_planned(plan, "bin/" + exe);
    if (!has_nvcc && !plans_cudart(plan, lib_rel))
        return std::nullopt; // headers or libraries alone are no toolkit
    if (!win) plan_bare_sonames(plan, lib_rel);
    plan_nvvm(plan, s, lib_rel, win);
    plan_target_mirror(plan, s.target, lib_rel);

    ToolkitIdentity id = identify(assembled_facts(s, plan, has_nvcc, exe, win));
    if (!id.version)
        throw std::runtime_error(dir.u8string() + " holds a CUDA toolkit (" + s.layout +
                                 ") but nothing tells its version: no package record, no "
                                 "CUDA_VERSION in include/cuda.h, no "
                                 "libcudart.so.X.Y.Z, and nvcc --version did not answer; import "
                                 "the toolkit's own root (the folder "
                                 "with version.json) instead");

    ToolkitImport out;
    Entry& e = out.entry;
    e = imported_toolkit(*id.version, s.origin);
    e.origin = s.origin;
    if (is_planned(plan, "bin/" + exe) ||
        std::any_of(plan.begin(), plan.end(),
                    [](const RootLink& l) { return starts_with(l.rel, "bin/"); }))
        e.bin_dirs = {"bin"};
    if (std::any_of(plan.begin(), plan.end(),
                    [](const RootLink& l) { return starts_with(l.rel, "include/"); }))
        e.include_dirs = {"include"};
    e.lib_dirs = {lib_rel};
    e.components = s.components;
    e.note = id.how + "; assembled from " + s.layout + " at " + s.origin.u8string();
    if (!has_nvcc) e.note += "; runtime only (no nvcc)";
    out.plan = std::move(plan);
    return out;
}

} // namespace

std::optional<ToolkitImport> toolkit_import_of(const fs::path& dir, platform::Os os,
                                               const IdentifyToolkit& identify) {
    const bool win = os == platform::Os::Windows;
    if (auto w = wheel_sources(dir))
        if (auto t = assemble_toolkit(dir, *w, os, identify)) return t;
    if (!win)
        if (auto prefix = debian_prefix(dir))
            return assemble_toolkit(dir, debian_sources(*prefix), os, identify);
    if (is_dir(dir / "conda-meta"))
        return assemble_toolkit(dir, conda_sources(dir, os), os, identify);

    FolderFacts facts = detect_folder(dir, os);
    const std::string undated =
        "cannot tell the CUDA version of " + dir.u8string() +
        " (no version.json, version.txt, CUDA_VERSION in include/cuda.h or working bin/nvcc); "
        "import the toolkit's own root, the folder with version.json";
    if (!facts.toolkit) {
        // nvcc or cuda.h without anything that dates them: a toolkit, but not one to guess at.
        if (is_file(dir / "bin" / (win ? "nvcc.exe" : "nvcc")) ||
            is_file(dir / "include" / "cuda.h"))
            throw std::runtime_error(undated);
        return std::nullopt;
    }
    if (is_shared_bin(dir / "bin", os)) {
        // nvcc among other programs (/usr, /usr/local): only CUDA's files go into the entry.
        ToolkitSources s = prefix_sources(dir, os);
        s.layout = "a shared prefix";
        return assemble_toolkit(dir, s, os, identify);
    }
    ToolkitIdentity id = identify(*facts.toolkit);
    if (!id.version) throw std::runtime_error(undated);
    ToolkitImport out;
    Entry& e = out.entry;
    e = imported_toolkit(*id.version, dir);
    e.include_dirs = facts.toolkit->include_dirs;
    e.lib_dirs = facts.toolkit->lib_dirs;
    e.bin_dirs = facts.toolkit->bin_dirs;
    e.note = id.how;
    return out;
}

} // namespace cvm
