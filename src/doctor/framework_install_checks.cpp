#include "framework_install_checks.h"

#include "diagnose_support.h"
#include "framework_cublas.h"
#include "framework_cudnn.h"

#include "activation/environment.h"
#include "spec/spec.h"
#include "platform/platform.h"
#include "text/path_list.h"

namespace cvm::doctor {

namespace {

std::string toolkit_or_placeholder(const DoctorInputs& in) {
    return in.resolved ? in.resolved->toolkit.version.str() : std::string("CUDA");
}

// A framework with its own cuDNN wheel: what it loads under cvm's LD_LIBRARY_PATH, judged
// from files (framework_cudnn.h), with the one way out.
void check_own_cudnn(const DoctorInputs& in, DoctorReport& report, const FrameworkInstall& f,
                     const std::string& label) {
    std::optional<Version> selected;
    if (in.resolved && in.resolved->cudnn) selected = in.resolved->cudnn->version;
    auto own = f.own_cudnn_version ? parse_version(*f.own_cudnn_version, 1, 4) : std::nullopt;
    const std::string where = " (" + *f.own_cudnn_dir + ")";
    if (!own || in.os == platform::Os::Windows) {
        // Windows' PyTorch loads torch/lib's DLLs skipping PATH; an unknown release is not judged.
        add_finding(report, Severity::note, "framework-own-cudnn",
                    label + " brings its own cuDNN" +
                        (f.own_cudnn_version ? " " + *f.own_cudnn_version : std::string()) +
                        " in " + *f.own_cudnn_dir);
        return;
    }
    if (f.name == "tensorflow") {
        // TensorFlow's XLA opens libcudnn.so.9 by name: the selection's may come first.
        if (selected && selected->str() != own->str())
            add_finding(report, Severity::warning, "framework-cudnn-other",
                        label + " brings its own cuDNN " + own->str() + where +
                            ", but it opens cuDNN by name and cvm puts "
                            "the selected " +
                            selected->str() + " first on LD_LIBRARY_PATH: it may load that one",
                        select_own_cudnn_fix(*f.own_cudnn_dir, *own, toolkit_or_placeholder(in)));
        else
            add_finding(report, Severity::note, "framework-own-cudnn",
                        label + " brings its own cuDNN " + own->str() + where);
        return;
    }
    auto v = judge_own_cudnn(f, label, selected, toolkit_or_placeholder(in));
    if (!v) return;
    switch (v->kind) {
    case FrameworkCudnnVerdict::Kind::Own:
        add_finding(report, Severity::note, "framework-own-cudnn", v->message + where);
        break;
    case FrameworkCudnnVerdict::Kind::Mixed:
        add_finding(report, Severity::warning, "framework-cudnn-mixed", v->message, v->fix);
        break;
    case FrameworkCudnnVerdict::Kind::Refused:
        add_finding(report, Severity::error, "framework-cudnn-refused", v->message, v->fix);
        break;
    }
}

// A framework with its own cuBLAS wheel: which libcublas and libcublasLt it loads under the
// selection's LD_LIBRARY_PATH (this shell's without one), judged from files (framework_cublas.h).
void check_own_cublas(const DoctorInputs& in, DoctorReport& report, const FrameworkInstall& f,
                      const std::string& label) {
    Env env = in.env;
    if (in.resolved) apply_changes(env, in.selected_changes, in.os);
    std::vector<std::string> library_path;
    if (auto it = env.find("LD_LIBRARY_PATH"); it != env.end())
        library_path = split_path_list(it->second, in.os);
    auto v = judge_own_cublas(f, label, library_path, *in.fs);
    if (!v) return;
    switch (v->kind) {
    case FrameworkCublasVerdict::Kind::Own:
        add_finding(report, Severity::note, "framework-own-cublas", v->message);
        break;
    case FrameworkCublasVerdict::Kind::Mixed:
        add_finding(report, Severity::warning, "framework-cublas-mixed", v->message, v->fix);
        break;
    case FrameworkCublasVerdict::Kind::Other:
        add_finding(report, Severity::warning, "framework-cublas-other", v->message, v->fix);
        break;
    }
}

} // namespace

void check_frameworks(const DoctorInputs& in, DoctorReport& report) {
    if (!in.python) {
        if (!in.python_failure.empty())
            add_finding(report, Severity::warning, "python-unanswered",
                        in.python_failure + ": what its frameworks load was not checked",
                        "check that it runs (`PY -I -c 'import sys'`), or set CVM_PYTHON to the "
                        "Python you use");
        return;
    }
    for (const auto& f : in.python->frameworks) {
        const std::string label =
            framework_title(f.name) + (f.version.empty() ? "" : " " + f.version);
        if (!f.damaged.empty()) {
            add_finding(report, Severity::error, "framework-damaged",
                        label + " in " + in.python->executable +
                            " is half-installed: " + f.damaged + ", so importing it fails",
                        reinstall_fix(f, in.python->executable));
            continue;
        }
        if (!f.cuda) {
            add_finding(report, Severity::note, "framework-cpu-only",
                        label + " in " + in.python->executable + " is a CPU-only build");
            continue;
        }
        auto built = parse_version(*f.cuda, 1, 3);
        if (f.own_cudnn_dir) check_own_cudnn(in, report, f, label);
        if (f.own_cublas && in.os == platform::Os::Linux) check_own_cublas(in, report, f, label);
        if (!in.resolved || !built) continue;
        const Entry& t = in.resolved->toolkit;
        const std::string want = built->str() + (f.cudnn ? "+" + *f.cudnn : std::string());
        if (built->major() != t.version.major()) {
            const bool uses_system = !f.own_cudnn_dir && f.name == "tensorflow";
            add_finding(report, uses_system ? Severity::error : Severity::warning,
                        "framework-cuda-mismatch",
                        label + " was built with CUDA " + *f.cuda + " but the selection is CUDA " +
                            t.version.str() +
                            (uses_system ? ": it will not find the CUDA libraries it needs"
                                         : ": CUDA extensions compiled with the selected toolkit "
                                           "will not load into it"),
                        "`cvm use " + want + "` (install it with `cvm install " + want +
                            "`), or install a build of the framework for CUDA " + t.version.str());
            continue;
        }
        if (f.cudnn && !f.own_cudnn_dir && in.resolved->cudnn) {
            auto expected = parse_version(*f.cudnn, 1, 4);
            const Entry& c = *in.resolved->cudnn;
            if (expected && expected->major() != c.version.major())
                add_finding(report, Severity::error, "framework-cudnn-mismatch",
                            label + " was built with cuDNN " + *f.cudnn +
                                " but the selection has " + "cuDNN " + c.version.str() +
                                ": it fails to load libcudnn",
                            "`cvm use " + t.version.str() + "+" + *f.cudnn + "`");
        }
    }
}

} // namespace cvm::doctor
