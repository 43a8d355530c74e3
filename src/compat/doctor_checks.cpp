#include "compat/doctor_checks.h"

#include "compat/auto_host_compiler.h"
#include "compat/cudnn_arch.h"
#include "compat/cudnn_files.h"
#include "compat/gpu_arch.h"
#include "compat/torch_arch.h"

#include <algorithm>
#include <set>

namespace cvm::compat {

std::vector<doctor::Finding> host_compiler_findings(const Store& store, const Entry& toolkit,
                                                    const std::map<std::string, std::string>& env) {
    using doctor::Finding;
    using doctor::Severity;
    std::vector<Finding> out;
    auto limits = toolkit_limits(toolkit);
    if (!limits) {
        out.push_back({Severity::note, "host-compiler-unknown",
                       "cvm does not know which host compilers CUDA " + toolkit.version.str() + " supports",
                       ""});
        return out;
    }
    // The auto choice is made for nvcc's unaided pick (and kept for the shim).
    const bool auto_mode = host_compiler_mode() != "off";
    HostCompilerStatus unaided = auto_mode ? refresh_host_compiler(store, toolkit)
                                           : host_compiler_status(toolkit_query(store, toolkit), &*limits);
    HostCompilerQuery q = toolkit_query(store, toolkit);
    for (const char* var : {"NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN"})
        for (const auto& [k, v] : env)
            if (platform::env_name_equal(k, var)) q.env[var] = v;
    if (q.env.count("NVCC_CCBIN")) q.nvcc_reads_ccbin_env = nvcc_honours_ccbin_env(toolkit);
    HostCompilerStatus now = host_compiler_status(q, &*limits);
    const bool user_choice = now.nvcc_default.origin != unaided.nvcc_default.origin;
    if (now.problem.empty()) return out;
    const platform::Os os = platform::host_os();
    // No compiler at all is a machine that runs programs, not one that builds them.
    if (!user_choice && now.nvcc_default.path.empty() && !unaided.choice) {
        out.push_back({Severity::note, "host-compiler-missing",
                       now.problem + ": fine for running programs, but nvcc cannot build here",
                       host_compiler_fix(*limits, os)});
        return out;
    }
    if (user_choice) {
        out.push_back({Severity::error, "host-compiler-unsupported",
                       now.problem + "; nvcc will refuse it",
                       "name a supported compiler in " + now.nvcc_default.origin + " (" +
                           limits->describe(os == platform::Os::Windows) + "), or remove it there" +
                           (unaided.choice ? " and cvm hands nvcc " + unaided.choice->ccbin : std::string())});
        return out;
    }
    if (unaided.choice && auto_mode) {
        out.push_back({Severity::note, "host-compiler-auto",
                       now.problem + "; cvm's nvcc shim hands over " + unaided.choice->ccbin +
                           (unaided.choice->via_env ? " (NVCC_CCBIN)" : " (-ccbin)"),
                       ""});
        return out;
    }
    std::string fix = unaided.choice
                          ? "set host_compiler = \"auto\" in cvm's config.toml (or unset CVM_HOST_COMPILER) "
                            "so that cvm hands nvcc " + unaided.choice->ccbin
                          : host_compiler_fix(*limits, os);
    out.push_back({Severity::error, "host-compiler-unsupported", now.problem + "; nvcc will refuse it", fix});
    return out;
}

std::vector<doctor::Finding> gpu_arch_findings(const Resolved& resolved,
                                               const std::optional<doctor::PythonInfo>& python) {
    using doctor::Finding;
    using doctor::Severity;
    std::vector<Finding> out;
    auto gpus = detect_gpus();
    if (gpus.empty()) return out;
    // The toolkit.
    try {
        std::vector<GpuArchRow> table = load_gpu_arch_table();
        if (const GpuArchRow* row = arch_row(table, resolved.toolkit.version))
            for (const auto& gpu : gpus) {
                ArchJudgement j = judge_arch(*row, gpu, table);
                if (j.support == ArchSupport::None)
                    out.push_back({Severity::error, "gpu-arch-unsupported", j.message,
                                   "select a toolkit that builds for it with `cvm use SPEC`"});
                else if (j.support == ArchSupport::PtxJit)
                    out.push_back({Severity::note, "gpu-arch-jit", j.message, ""});
            }
    } catch (const std::exception&) {
    }
    // The cuDNN build.
    if (resolved.cudnn) {
        try {
            std::vector<CudnnArchRow> table = load_cudnn_arch_table();
            if (const CudnnArchRow* row = cudnn_arch_row(table, resolved.cudnn->version, resolved.cudnn->cuda))
                for (const auto& gpu : gpus) {
                    CudnnArchJudgement j = judge_cudnn_arch(*row, resolved.cudnn->version, gpu, table);
                    if (j.support == CudnnArchSupport::None)
                        out.push_back({Severity::error, "cudnn-arch-unsupported", j.message,
                                       "select a cuDNN that supports it with `cvm use CUDA+CUDNN`"});
                    else if (j.support == CudnnArchSupport::ForwardOnly)
                        out.push_back({Severity::note, "cudnn-arch-forward", j.message, ""});
                }
        } catch (const std::exception&) {
        }
    }
    // PyTorch of the active Python (a GPU build only: a CPU build has nothing to judge).
    if (python)
        for (const auto& f : python->frameworks) {
            if (f.name != "pytorch" || !f.cuda) continue;
            auto archs = torch_arch_list(python->executable);
            if (!archs || archs->empty()) break;
            const std::string torch = "PyTorch " + (f.version.empty() ? std::string("(version unknown)") : f.version);
            for (const auto& gpu : gpus) {
                TorchArchJudgement j = judge_torch_arch(*archs, gpu, torch);
                if (j.support == TorchArchSupport::None)
                    out.push_back({Severity::error, "torch-arch-unsupported", j.message + " (" + python->executable + ")",
                                   "install a PyTorch build whose torch.cuda.get_arch_list() holds sm_" +
                                       std::to_string(gpu.cc) + " (a build for a newer CUDA)"});
                else if (j.support == TorchArchSupport::PtxJit)
                    out.push_back({Severity::note, "torch-arch-jit", j.message + " (" + python->executable + ")", ""});
            }
            break;
        }
    return out;
}

void revise_cudnn_sets(doctor::DoctorReport& report) {
    using doctor::Finding;
    using doctor::Severity;
    auto& libraries = report.libraries;
    std::vector<Finding> out;
    std::set<std::string> scenarios;
    for (const auto& l : libraries)
        if (l.family == "cudnn" && l.path && !l.failure) scenarios.insert(l.scenario);
    std::set<std::string> reported; // the same set seen in both scenarios is reported once
    for (const auto& scenario : scenarios) {
        std::vector<doctor::LibraryLoad*> set;
        std::vector<std::string> paths;
        for (auto& l : libraries)
            if (l.family == "cudnn" && l.scenario == scenario && l.path && !l.failure) {
                set.push_back(&l);
                paths.push_back(*l.path);
            }
        static const CudnnEvidenceRoots roots = machine_owner_roots();
        CudnnSetCheck check = check_cudnn_set(paths, roots);
        for (auto* l : set)
            for (const auto& f : check.files)
                if (f.path == *l->path && f.version) {
                    // Release numbers only (a wheel's build number is not in the files), unless
                    // what the loader read already says more of the same release (a DLL's 8.1.0.77).
                    Version mine{{f.version->major(), f.version->minor(),
                                  f.version->parts.size() > 2 ? f.version->parts[2] : 0}};
                    auto had = l->version ? parse_version(*l->version, 1, 4) : std::nullopt;
                    if (!(had && had->parts.size() > 3 && had->has_prefix(mine))) l->version = mine.str();
                }
        if (!check.problem()) continue;
        std::string listing = check.listing();
        if (!reported.insert(listing).second) continue;
        const std::string where = scenario == "current" ? "a program started in this shell" : "a program run through cvm";
        std::string what = check.mixed_versions ? "of different releases, which fails with "
                                                  "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED"
                           : check.altered ? "that are not the files their package or wheel installed, which fails "
                                             "or computes wrongly"
                                           : "from different folders, which fails or computes wrongly when they are "
                                             "not one build";
        out.push_back({Severity::error, "sublibraries-mixed", where + " loads cuDNN files " + what + ": " + listing,
                       check.fix()});
    }
    // The loader's per-file findings of cuDNN give way to the ones above (one per scenario).
    auto& findings = report.findings;
    findings.erase(std::remove_if(findings.begin(), findings.end(),
                                  [](const Finding& f) {
                                      return f.code == "sublibraries-mixed" &&
                                             (f.message.rfind("libcudnn", 0) == 0 || f.message.rfind("cudnn", 0) == 0);
                                  }),
                   findings.end());
    for (auto& f : out) findings.push_back(std::move(f));
}

} // namespace cvm::compat