#include "framework_cudnn.h"

namespace cvm::doctor {

namespace {

bool same_release(const Version& a, const Version& b) {
    for (size_t i = 0; i < 3; ++i) {
        unsigned x = i < a.parts.size() ? a.parts[i] : 0;
        unsigned y = i < b.parts.size() ? b.parts[i] : 0;
        if (x != y) return false;
    }
    return true;
}

// major.minor.patch, as both frameworks print a release ("9.8" is 9.8.0).
std::string three(const Version& v) {
    Version t = v;
    t.parts.resize(3, 0);
    return t.str();
}

// What the framework does with a release it refuses, in its own words.
std::string cudnn_refusal(CudnnRefuser who, const Version& runtime, const Version& built) {
    if (who == CudnnRefuser::Xla)
        return "so XLA fails at its first cuDNN use: \"Loaded runtime CuDNN library: " + three(runtime) +
               " but source was compiled with: " + three(built) + "\", then \"DNN library initialization failed\"";
    return "so torch.backends.cudnn.version() raises \"cuDNN version incompatibility\"";
}

} // namespace

FrameworkCudnnVerdict judge_framework_cudnn(const std::string& label, const Version& built, const Version& own,
                                            const std::optional<Version>& selected, bool subs_by_rpath,
                                            CudnnRefuser who) {
    FrameworkCudnnVerdict v;
    if (!selected) {
        v.message = label + " loads its own cuDNN " + own.str() + " (nothing else is selected)";
        return v;
    }
    if (same_release(*selected, own)) {
        v.message = label + " loads its own cuDNN " + own.str() + ", the selected release";
        return v;
    }
    if (selected->major() != own.major()) {
        v.message = label + " loads its own cuDNN " + own.str() + ": the selected cuDNN " + selected->str() +
                    " is another major, whose libraries it never opens";
        return v;
    }
    if (subs_by_rpath) {
        v.message = label + " loads its own cuDNN " + own.str() + " whole: its libcudnn.so." +
                    std::to_string(own.major()) +
                    " finds its sub-libraries through its RPATH ($ORIGIN), which comes before LD_LIBRARY_PATH, "
                    "so the selected " + selected->str() + " does not mix in";
        return v;
    }
    // The selection's sub-libraries come first on LD_LIBRARY_PATH; the release reported is theirs.
    const bool accepted = selected->major() == built.major() && selected->minor() >= built.minor();
    const std::string mixed = label + " would load a mixed cuDNN under cvm: its own front library " + own.str() +
                              " (which it loads from its wheel) with the selected " + selected->str() +
                              "'s sub-libraries (" +
                              (own.major() >= 9 ? "libcudnn_graph, _ops, _engines_*" : "libcudnn_ops_infer, _cnn_infer, ...") +
                              ": cuDNN opens them by name, and cvm puts the selected folder first on LD_LIBRARY_PATH)";
    if (accepted) {
        v.kind = FrameworkCudnnVerdict::Kind::Mixed;
        v.message = mixed + "; it accepts " + three(*selected) + " (built with " + three(built) +
                    ") but runs on a set NVIDIA never tested together";
    } else {
        v.kind = FrameworkCudnnVerdict::Kind::Refused;
        v.message = mixed + "; it refuses " + three(*selected) + " (built with " + three(built) +
                    ": it needs " + std::to_string(built.major()) + "." + std::to_string(built.minor()) +
                    " or a later " + std::to_string(built.major()) +
                    ".x), " + cudnn_refusal(who, *selected, built);
    }
    return v;
}

std::optional<FrameworkCudnnVerdict> judge_own_cudnn(const FrameworkInstall& f, const std::string& label,
                                                     const std::optional<Version>& selected,
                                                     const std::string& toolkit) {
    if ((f.name != "pytorch" && f.name != "jax") || !f.own_cudnn_dir || !f.own_cudnn_version) return std::nullopt;
    auto own = parse_version(*f.own_cudnn_version, 1, 4);
    if (!own) return std::nullopt;
    // The cuDNN it was built with: its METADATA's pin (PyTorch) or lower bound (JAX's plugin), else
    // its wheel's (PyTorch's release practice).
    Version built = f.cudnn ? parse_version(*f.cudnn, 1, 4).value_or(*own) : *own;
    FrameworkCudnnVerdict v = judge_framework_cudnn(label, built, *own, selected, f.own_cudnn_rpath,
                                                    f.name == "jax" ? CudnnRefuser::Xla : CudnnRefuser::PyTorch);
    if (v.kind != FrameworkCudnnVerdict::Kind::Own) v.fix = *own_cudnn_way_out(f, toolkit);
    return v;
}

std::optional<std::string> own_cudnn_way_out(const FrameworkInstall& f, const std::string& toolkit) {
    if (!f.own_cudnn_dir || !f.own_cudnn_version) return std::nullopt;
    auto own = parse_version(*f.own_cudnn_version, 1, 4);
    if (!own) return std::nullopt;
    return select_own_cudnn_fix(*f.own_cudnn_dir, *own, toolkit, f.name == "pytorch");
}

std::string select_own_cudnn_fix(const std::string& own_dir, const Version& own, const std::string& toolkit,
                                 bool use_for) {
    std::string wheel = own_dir;
    for (const std::string tail : {"/lib", "\\bin"})
        if (wheel.size() > tail.size() && wheel.compare(wheel.size() - tail.size(), tail.size(), tail) == 0)
            wheel.resize(wheel.size() - tail.size());
    const std::string by_hand = "`cvm import " + wheel + "`, then `cvm use " + toolkit + "+" + own.str() +
                                "` (or `cvm use " + toolkit + "` to select none)";
    if (use_for)
        return "select its own cuDNN and NCCL in one command: `cvm use --for .` (imports its wheels and selects them "
               "with the toolkit it was built for), or only its cuDNN: " + by_hand;
    return "select its own cuDNN: " + by_hand;
}

} // namespace cvm::doctor
