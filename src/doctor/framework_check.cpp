#include "framework_check.h"

#include "file_system_view.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>

namespace cvm::doctor {

// Each step is tried on its own, so a check that raises (PyTorch refusing its cuDNN) still lets
// the convolution and the mapped files be reported. Python 3.8 and later.
const char* const kFrameworkCheckScript = R"PY(
import importlib.util, json, os, sys
MARK = "cvm-framework-check: "
name = sys.argv[1]
r = {"framework": name, "installed": False}
step = ["import"]

def first_line(e):
    text = str(e).strip().splitlines()
    return type(e).__name__ + (": " + text[0].strip() if text else "")

def failed(e):
    if "error" not in r:
        r["error"] = first_line(e)
        r["error_step"] = step[0]

def attempt(what, f):
    step[0] = what
    try:
        f()
    except Exception as e:
        failed(e)

def mapped():
    try:
        with open("/proc/self/maps") as maps:
            lines = maps.read().splitlines()
    except OSError:
        return None
    seen = []
    for line in lines:
        parts = line.split(None, 5)
        if len(parts) == 6:
            path = parts[5].strip()
            if os.path.basename(path).startswith(("libcudnn", "libnccl", "libcudart", "libcublas")) and path not in seen:
                seen.append(path)
    return seen

def relative_error(got, ref):
    import numpy
    got = numpy.asarray(got, dtype=numpy.float64)
    ref = numpy.asarray(ref, dtype=numpy.float64)
    return float(numpy.abs(got - ref).max()) / (float(numpy.abs(ref).max()) or 1.0)

def convolution(run):
    conv = r["convolution"] = {"ran": True}
    step[0] = "convolution"
    try:
        conv["max_error"] = run()
    except Exception as e:
        conv["error"] = first_line(e)

def release(number):
    return "%d.%d.%d" % (number // 10000, number % 10000 // 100, number % 100) if number >= 10000 else \
        "%d.%d.%d" % (number // 1000, number % 1000 // 100, number % 100)

def check_torch():
    import torch
    r["version"] = torch.__version__
    r["cuda"] = torch.version.cuda
    try:
        r["cudnn_built"] = ".".join(str(n) for n in torch._C._cudnn.getCompileVersion())
    except Exception:
        pass
    def version():
        r["cudnn_version"] = torch.backends.cudnn.version()
    attempt("cudnn", version)
    def nccl():
        v = torch.cuda.nccl.version()
        r["nccl_version"] = ".".join(str(n) for n in v) if isinstance(v, tuple) else str(v)
    try:
        nccl()
    except Exception:
        pass
    def devices():
        if torch.cuda.is_available():
            r["gpus"] = torch.cuda.device_count()
            r["gpu_name"] = torch.cuda.get_device_name(0)
    attempt("devices", devices)
    if r.get("gpus"):
        def run():
            torch.backends.cudnn.allow_tf32 = False
            g = torch.Generator().manual_seed(7)
            x = torch.randn(4, 16, 32, 32, generator=g)
            w = torch.randn(32, 16, 3, 3, generator=g)
            ref = torch.nn.functional.conv2d(x.double(), w.double(), padding=1)
            got = torch.nn.functional.conv2d(x.cuda(), w.cuda(), padding=1).double().cpu()
            return float((got - ref).abs().max() / ref.abs().max())
        convolution(run)

def check_jax():
    import jax
    r["version"] = jax.__version__
    def versions():
        from jax._src.lib import cuda_versions
        if cuda_versions is not None:
            r["cudnn_version"] = cuda_versions.cudnn_get_version()
            r["cudnn_built"] = release(cuda_versions.cudnn_build_version())
    try:
        versions()
    except Exception:
        pass
    gpus = []
    def devices():
        gpus.extend(d for d in jax.devices() if d.platform == "gpu")
        r["gpus"] = len(gpus)
        if gpus:
            r["gpu_name"] = gpus[0].device_kind
    attempt("devices", devices)
    if gpus:
        def run():
            import numpy
            rng = numpy.random.default_rng(7)
            x = rng.standard_normal((4, 16, 32, 32), dtype=numpy.float32)
            w = rng.standard_normal((32, 16, 3, 3), dtype=numpy.float32)
            conv = lambda a, b: jax.lax.conv_general_dilated(a, b, (1, 1), "SAME",
                                                             precision=jax.lax.Precision.HIGHEST)
            cpu = jax.devices("cpu")[0]
            ref = conv(jax.device_put(x, cpu), jax.device_put(w, cpu))
            got = conv(jax.device_put(x, gpus[0]), jax.device_put(w, gpus[0]))
            return relative_error(numpy.asarray(got), numpy.asarray(ref))
        convolution(run)

def check_tensorflow():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    r["version"] = tf.__version__
    info = tf.sysconfig.get_build_info()
    r["cuda"] = info.get("cuda_version")
    r["cudnn_built"] = info.get("cudnn_version")
    gpus = []
    def devices():
        gpus.extend(tf.config.list_physical_devices("GPU"))
        r["gpus"] = len(gpus)
    attempt("devices", devices)
    if gpus:
        def run():
            import numpy
            tf.config.experimental.enable_tensor_float_32_execution(False)
            rng = numpy.random.default_rng(7)
            x = rng.standard_normal((4, 32, 32, 16), dtype=numpy.float32)
            w = rng.standard_normal((3, 3, 16, 32), dtype=numpy.float32)
            with tf.device("/GPU:0"):
                got = tf.nn.conv2d(x, w, 1, "SAME").numpy()
            with tf.device("/CPU:0"):
                ref = tf.nn.conv2d(x.astype(numpy.float64), w.astype(numpy.float64), 1, "SAME").numpy()
            return relative_error(got, ref)
        convolution(run)

try:
    found = importlib.util.find_spec(name) is not None
except Exception as e:
    found = False
    failed(e)
if found:
    r["installed"] = True
    try:
        {"torch": check_torch, "jax": check_jax, "tensorflow": check_tensorflow}[name]()
    except Exception as e:
        failed(e)
r["loaded"] = mapped()
sys.stdout.write("\n" + MARK + json.dumps(r) + "\n")
sys.stdout.flush()
)PY";

const char* const kFrameworkReportMark = "cvm-framework-check: ";

const std::vector<std::string>& checked_frameworks() {
    static const std::vector<std::string> names{"pytorch", "jax", "tensorflow"};
    return names;
}

namespace {

std::string string_or(const nlohmann::json& doc, const char* key, std::string fallback = {}) {
    auto it = doc.find(key);
    return it != doc.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::optional<std::string> optional_string(const nlohmann::json& doc, const char* key) {
    auto it = doc.find(key);
    if (it == doc.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
}

bool contains(const std::string& text, std::string_view part) {
    return text.find(part) != std::string::npos;
}

// A library whose files must come from one release (one folder): cuDNN's front library and its
// sub-libraries, cuBLAS and cuBLASLt.
struct LibraryFamily {
    const char* name;   // for people
    const char* kind;   // the warning's kind
    const char* prefix; // of its files' names (Linux: lib...; Windows: without)
};
constexpr LibraryFamily kCudnn{"cuDNN", "mixed_cudnn", "cudnn"};
constexpr LibraryFamily kCublas{"cuBLAS", "mixed_cublas", "cublas"};

bool in_family(const std::string& path, const LibraryFamily& family) {
    const std::string name = path_basename(path);
    return name.rfind(std::string("lib") + family.prefix, 0) == 0 || name.rfind(family.prefix, 0) == 0;
}

FolderFiles family_files(const std::vector<std::string>& loaded, const LibraryFamily& family) {
    FolderFiles out;
    for (const auto& f : loaded) {
        if (!in_family(f, family)) continue;
        const std::string dir = path_dirname(f);
        auto it = std::find_if(out.begin(), out.end(), [&](const auto& entry) { return entry.first == dir; });
        if (it == out.end()) it = out.insert(out.end(), {dir, {}});
        it->second.push_back(path_basename(f));
    }
    return out;
}

// A warning where the family's files came from several folders; where the framework also refused
// a release, the refusal is the problem and this is why.
void warn_mixed(FrameworkJudgement& j, const std::vector<std::string>& loaded, const LibraryFamily& family,
                const std::string& label, const std::string& fix) {
    const auto folders = family_files(loaded, family);
    if (folders.size() < 2) return;
    std::string files;
    for (const auto& f : loaded)
        if (in_family(f, family)) files += (files.empty() ? "" : ", ") + f;
    j.warnings.push_back({family.kind,
                          label + " loaded a mixed " + family.name + ", its files from " +
                              std::to_string(folders.size()) + " folders: " + files,
                          fix});
}

// The kind of failure its message shows, and what it means.
CheckFinding failure_finding(const FrameworkRun& run, const std::string& label, const std::string& fix) {
    const std::string& e = run.error;
    CheckFinding f;
    f.fix = fix;
    if (contains(e, "cuDNN version incompatibility") || contains(e, "Loaded runtime CuDNN library") ||
        contains(e, "DNN library initialization failed") || contains(e, "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH")) {
        f.kind = "cudnn_refused";
        f.message = label + " refuses the cuDNN it loads under this selection: " + e;
    } else if (contains(e, "undefined symbol") || (contains(e, "version `") && contains(e, "not found"))) {
        f.kind = "foreign_symbols";
        f.message = label + " loads a library of another release under this selection: " + e;
    } else if (contains(e, "cannot open shared object file") || contains(e, "DLL load failed")) {
        f.kind = "library_not_found";
        f.message = label + " cannot find a library under this selection: " + e;
        if (f.fix.empty()) f.fix = "`cvm doctor` names the folders searched";
    } else {
        f.kind = "framework_error";
        f.message = label + " failed (" + run.error_step + "): " + e;
        if (f.fix.empty()) f.fix = "`cvm doctor` names what each library loads from where";
    }
    return f;
}

std::string error_text(double value) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.3g", value);
    return text;
}

} // namespace

std::optional<FrameworkRun> parse_framework_report(std::string_view output) {
    const std::string_view mark = kFrameworkReportMark;
    std::size_t at = std::string_view::npos;
    for (std::size_t pos = output.find(mark); pos != std::string_view::npos; pos = output.find(mark, pos + 1))
        if (pos == 0 || output[pos - 1] == '\n') at = pos;
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view line = output.substr(at + mark.size());
    line = line.substr(0, line.find('\n'));
    nlohmann::json doc = nlohmann::json::parse(line, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("framework") || !doc["framework"].is_string())
        return std::nullopt;
    FrameworkRun run;
    run.framework = doc["framework"].get<std::string>();
    run.installed = doc.value("installed", false);
    run.version = string_or(doc, "version");
    run.cuda = optional_string(doc, "cuda");
    run.cudnn_built = optional_string(doc, "cudnn_built");
    if (auto it = doc.find("cudnn_version"); it != doc.end() && it->is_number_integer())
        run.cudnn_version = it->get<long long>();
    run.nccl_version = optional_string(doc, "nccl_version");
    run.error = string_or(doc, "error");
    run.error_step = string_or(doc, "error_step");
    if (auto it = doc.find("gpus"); it != doc.end() && it->is_number_integer()) run.gpus = it->get<int>();
    run.gpu_name = string_or(doc, "gpu_name");
    if (auto it = doc.find("convolution"); it != doc.end() && it->is_object()) {
        run.convolution.ran = true;
        run.convolution.error = string_or(*it, "error");
        if (auto m = it->find("max_error"); m != it->end() && m->is_number()) run.convolution.max_error = m->get<double>();
        else if (run.convolution.error.empty()) run.convolution.error = "it reported no result";
    }
    if (auto it = doc.find("loaded"); it != doc.end() && it->is_array()) {
        std::vector<std::string> files;
        for (const auto& f : *it)
            if (f.is_string()) files.push_back(f.get<std::string>());
        run.loaded = std::move(files);
    }
    return run;
}

FolderFiles cudnn_files(const std::vector<std::string>& loaded) {
    return family_files(loaded, kCudnn);
}

std::vector<std::string> cudnn_folders(const std::vector<std::string>& loaded) {
    std::vector<std::string> out;
    for (const auto& entry : cudnn_files(loaded)) out.push_back(entry.first);
    return out;
}

FrameworkJudgement judge_framework_run(const FrameworkRun& run, const std::string& label, const std::string& fix,
                                       double tolerance) {
    FrameworkJudgement j;
    if (!run.error.empty()) j.problems.push_back(failure_finding(run, label, fix));
    if (run.loaded) {
        warn_mixed(j, *run.loaded, kCudnn, label, fix);
        warn_mixed(j, *run.loaded, kCublas, label, "`cvm doctor` names which cuBLAS each folder holds");
    } else {
        j.not_checked.push_back("which library files " + label + " loaded (no /proc/self/maps here)");
    }
    if (run.convolution.ran) {
        if (!run.convolution.error.empty()) {
            j.problems.push_back({"framework_error", label + "'s convolution on the GPU failed: " + run.convolution.error, fix});
        } else if (!(run.convolution.max_error <= tolerance)) {
            j.problems.push_back({"wrong_result",
                                  label + "'s convolution on the GPU differs from the CPU's: max relative error " +
                                      error_text(run.convolution.max_error) + " > " + error_text(tolerance),
                                  fix});
        }
    } else if (run.error.empty() || run.error_step != "import") {
        j.not_checked.push_back(label + "'s convolution on the GPU (it sees no GPU)");
    }
    if (j.problems.empty()) {
        j.summary = label;
        if (run.cudnn_version) j.summary += " loads cuDNN " + std::to_string(*run.cudnn_version);
        if (run.convolution.ran)
            j.summary += std::string(run.cudnn_version ? " and" : "") + " computes a convolution on the GPU within " +
                         error_text(tolerance) + " of the CPU's";
        else
            j.summary += run.cudnn_version ? " and accepts it" : " imports";
    }
    return j;
}

} // namespace cvm::doctor
