#include "cli/framework_warning.h"

#include "cli/context.h"
#include "doctor/framework_cublas.h"
#include "doctor/framework_cudnn.h"
#include "doctor/python_env.h"
#include "platform/platform.h"
#include "text/path_list.h"

namespace cvm::cli {

namespace {

// The folders of LD_LIBRARY_PATH under selection `r`, in order; none where its environment cannot
// be made (the command itself says why when it needs it).
std::vector<std::string> selected_library_path(const Store& store, const Resolved& r) {
    try {
        for (const auto& change : selection_changes(store, r))
            if (change.name == "LD_LIBRARY_PATH" && change.value)
                return split_path_list(*change.value, platform::Os::Linux);
    } catch (const std::exception&) {
    }
    return {};
}

} // namespace

void warn_framework_libraries(const Store& store, const Resolved& r) {
    if (platform::host_os() == platform::Os::Windows) return;
    doctor::RealFileSystem files;
    const std::string interpreter = doctor::default_python();
    if (interpreter.empty()) return; // no Python here: nothing to warn of
    std::string why;
    auto python = doctor::inspect_python(interpreter, files, &why);
    if (!python) {
        if (r.cudnn) note("note: " + why + ", so what its frameworks would load under " + r.active() + " was not checked");
        return;
    }
    std::optional<std::vector<std::string>> library_path; // worked out once, where a framework has its own cuBLAS
    for (const auto& f : python->frameworks) {
        if (!f.cuda) continue;
        const std::string label = doctor::framework_title(f.name) + " " + f.version + " in " + python->executable;
        if (r.cudnn) {
            auto v = doctor::judge_own_cudnn(f, label, r.cudnn->version, r.toolkit.version.str());
            if (v && v->kind != doctor::FrameworkCudnnVerdict::Kind::Own)
                note(std::string(v->kind == doctor::FrameworkCudnnVerdict::Kind::Refused ? "error ahead: " : "warning: ") +
                     v->message + "; " + v->fix);
        }
        if (!f.own_cublas) continue;
        if (!library_path) library_path = selected_library_path(store, r);
        auto v = doctor::judge_own_cublas(f, label, *library_path, files);
        if (v && v->kind != doctor::FrameworkCublasVerdict::Kind::Own) note("warning: " + v->message + "; " + v->fix);
    }
}

} // namespace cvm::cli
