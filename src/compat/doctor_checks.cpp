#include "compat/doctor_checks.h"

#include "compat/auto_host_compiler.h"

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

} // namespace cvm::compat
