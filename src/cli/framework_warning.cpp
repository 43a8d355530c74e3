#include "cli/framework_warning.h"

#include "cli/context.h"
#include "doctor/framework_cudnn.h"
#include "doctor/python_env.h"
#include "platform/platform.h"

namespace cvm::cli {

void warn_framework_cudnn(const Resolved& r) {
    if (!r.cudnn || platform::host_os() == platform::Os::Windows) return;
    doctor::RealFileSystem files;
    auto python = doctor::inspect_python(doctor::default_python(), files);
    if (!python) return;
    for (const auto& f : python->frameworks) {
        if (f.name != "pytorch" || !f.cuda || !f.own_cudnn_dir || !f.own_cudnn_version) continue;
        auto own = parse_version(*f.own_cudnn_version, 1, 4);
        if (!own) continue;
        Version built = f.cudnn ? parse_version(*f.cudnn, 1, 4).value_or(*own) : *own;
        auto verdict = doctor::judge_framework_cudnn("PyTorch " + f.version + " in " + python->executable, built,
                                                     *own, r.cudnn->version, f.own_cudnn_rpath);
        if (verdict.kind == doctor::FrameworkCudnnVerdict::Kind::Own) continue;
        note(std::string(verdict.kind == doctor::FrameworkCudnnVerdict::Kind::Refused ? "error ahead: " : "warning: ") +
             verdict.message + "; " +
             doctor::select_own_cudnn_fix(*f.own_cudnn_dir, *own, r.toolkit.version.str()));
    }
}

} // namespace cvm::cli
