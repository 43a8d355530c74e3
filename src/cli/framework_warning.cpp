#include "cli/framework_warning.h"

#include "cli/context.h"
#include "doctor/framework_cudnn.h"
#include "doctor/python_env.h"
#include "platform/platform.h"

namespace cvm::cli {

void warn_framework_cudnn(const Resolved& r) {
    if (!r.cudnn || platform::host_os() == platform::Os::Windows) return;
    doctor::RealFileSystem files;
    const std::string interpreter = doctor::default_python();
    if (interpreter.empty()) return; // no Python here: nothing to warn of
    std::string why;
    auto python = doctor::inspect_python(interpreter, files, &why);
    if (!python) {
        note("note: " + why + ", so what its frameworks would load under " + r.active() + " was not checked");
        return;
    }
    for (const auto& f : python->frameworks) {
        if (!f.cuda) continue;
        auto v = doctor::judge_own_cudnn(f, doctor::framework_title(f.name) + " " + f.version + " in " + python->executable,
                                         r.cudnn->version, r.toolkit.version.str());
        if (!v || v->kind == doctor::FrameworkCudnnVerdict::Kind::Own) continue;
        note(std::string(v->kind == doctor::FrameworkCudnnVerdict::Kind::Refused ? "error ahead: " : "warning: ") +
             v->message + "; " + v->fix);
    }
}

} // namespace cvm::cli
