// `cvm use --for`: the solver over the shipped registry tables, one row per framework version
// and machine with the choice expected, and one "nothing fits" row per constraint.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "compat/solver.h"
#include "platform/platform.h"
#include "version_support.h"

using namespace cvm;
using namespace cvm::compat;
using cvm::test::v;

namespace {

struct Tables {
    registry::Registry reg = registry::load_default_registry();
    HostCompilerTable compilers = load_host_compiler_table();
    std::vector<GpuArchRow> archs = load_gpu_arch_table();
    Knowledge know() const { return {&reg, &compilers, &archs}; }
};
const Tables& tables() {
    static Tables t;
    return t;
}

CompilerId gcc(const char* ver) {
    return {CompilerKind::Gcc, v(ver)};
}
CompilerId clang(const char* ver) {
    return {CompilerKind::Clang, v(ver)};
}

MachineFacts machine(std::optional<const char*> driver, std::vector<Gpu> gpus,
                     std::vector<CompilerId> compilers, std::vector<const char*> toolkits = {},
                     std::vector<const char*> cudnn = {}) {
    MachineFacts m;
    if (driver) m.driver = registry::parse_driver_version(*driver);
    m.gpus = std::move(gpus);
    m.compilers = std::move(compilers);
    for (const char* t : toolkits)
        m.toolkits.push_back(v(t));
    for (const char* c : cudnn)
        m.cudnn.push_back(*parse_cudnn_id(c));
    return m;
}

FrameworkWant want(const char* text) {
    return parse_framework_want(tables().reg, text);
}

FrameworkWant installed(const char* name, const char* version, std::optional<const char*> cuda,
                        std::optional<const char*> cudnn = std::nullopt) {
    FrameworkWant w;
    w.name = name;
    w.version = v(version);
    w.label = std::string(name) + " " + version + " in /venv";
    w.installed = true;
    if (cuda) w.built_cuda = v(*cuda);
    if (cudnn) w.built_cudnn = v(*cudnn);
    return w;
}

bool has_reason(const Pick& p, Constraint c, const std::string& text) {
    for (const auto& r : p.reasons)
        if (r.constraint == c && r.text.find(text) != std::string::npos) return true;
    return false;
}

bool has_note(const SolveResult& r, const std::string& text) {
    for (const auto& n : r.notes)
        if (n.find(text) != std::string::npos) return true;
    return false;
}

const Gpu h200{"NVIDIA H200", 90};
const Gpu a100{"NVIDIA A100-SXM4-80GB", 80};
const Gpu k80{"Tesla K80", 37};

} // namespace

TEST_CASE("use --for: the choice for each framework version and machine") {
    struct Row {
        const char* name;
        std::vector<FrameworkWant> wants;
        MachineFacts machine;
        const char* spec; // the expected choice
        bool toolkit_installed;
    };
    const std::vector<Row> rows{
        {"TensorFlow 2.10 on a CI machine with gcc 10: its tested CUDA 11.2 and the newest cuDNN "
         "8.1",
         {want("tensorflow==2.10")},
         machine(std::nullopt, {}, {gcc("10.5.0")}),
         "11.2.2+8.1.1.33",
         false},
        {"TensorFlow 2.10 where an older 11.2 and cuDNN 8.1.0 are installed: those",
         {want("tensorflow==2.10")},
         machine("535.104.05", {a100}, {gcc("10.5.0")}, {"11.2.1", "12.4.1"},
                 {"8.1.0.77-cuda11.2", "8.9.7.29-cuda12"}),
         "11.2.1+8.1.0.77",
         true},
        {"TensorFlow 2.15 on an H200 with gcc 12",
         {want("tensorflow==2.15.1")},
         machine("580.95.05", {h200}, {gcc("12.2.0")}),
         "12.2.2+8.9.7.29",
         false},
        {"torch 2.5 on a new driver: the newest of its CUDA variants",
         {want("torch==2.5")},
         machine("580.95.05", {h200}, {gcc("12.2.0")}),
         "12.4.1",
         false},
        {"torch 2.5 where CUDA 12.1 is installed: the installed one",
         {want("torch==2.5")},
         machine("580.95.05", {h200}, {gcc("12.2.0")}, {"12.1.1"}),
         "12.1.1",
         true},
        {"torch 2.5 on driver 535: 12.1 runs natively, 12.4 only through minor-version "
         "compatibility",
         {want("torch==2.5")},
         machine("535.104.05", {a100}, {gcc("12.2.0")}),
         "12.1.1",
         false},
        {"torch 2.5 on driver 470 with gcc 11: only CUDA 11.8 (minor-version compatibility)",
         {want("torch==2.5")},
         machine("470.82.01", {a100}, {gcc("11.4.0")}),
         "11.8.0",
         false},
        {"torch 2.5 on driver 470 with gcc 11 and 12: gcc 11 is one CUDA 11.8 takes",
         {want("torch==2.5")},
         machine("470.82.01", {a100}, {gcc("11.4.0"), gcc("12.2.0")}),
         "11.8.0",
         false},
        {"torch 2.5.1+cu121 asked for: exactly CUDA 12.1",
         {want("torch==2.5.1+cu121")},
         machine("580.95.05", {h200}, {gcc("12.2.0")}, {"12.4.1"}),
         "12.1.1",
         false},
        {"installed torch 2.5.1+cu124: its torch.version.cuda, no cuDNN",
         {installed("pytorch", "2.5.1", "12.4")},
         machine(std::nullopt, {}, {}, {"12.1.1", "12.4.0"}),
         "12.4.0",
         true},
        {"installed TensorFlow 2.10 whose build_info says cuDNN 8: the registry's 8.1",
         {installed("tensorflow", "2.10.0", "11.2", "8")},
         machine(std::nullopt, {}, {clang("11.0.1")}),
         "11.2.2+8.1.1.33",
         false},
        {"TensorFlow 2.4 on an H200: CUDA 11.0 only JIT-compiles compute_80, still the one that "
         "fits",
         {want("tensorflow==2.4")},
         machine("580.95.05", {h200}, {gcc("9.4.0")}),
         "11.0.3+8.0.5.39",
         false},
        {"TensorFlow 2.10 with a torch built for 11.2 beside it: both agree on 11.2",
         {want("tensorflow==2.10"), installed("pytorch", "1.9.1", "11.2")},
         machine(std::nullopt, {}, {gcc("10.5.0")}),
         "11.2.2+8.1.1.33",
         false},
    };
    for (const auto& row : rows) {
        INFO(row.name);
        SolveResult r = solve(row.wants, row.machine, tables().know());
        INFO(r.why);
        REQUIRE(r.pick);
        CHECK(r.pick->spec().str() == row.spec);
        CHECK(r.pick->toolkit_installed == row.toolkit_installed);
        // Every choice is explained, one line each.
        CHECK(has_reason(*r.pick, Constraint::Framework, "toolkit: CUDA " + r.pick->toolkit.str()));
        for (const auto& reason : r.pick->reasons)
            CHECK(reason.text.find('\n') == std::string::npos);
    }
}

TEST_CASE("use --for: what each choice says") {
    SECTION("no driver and no GPU: those checks are skipped with a note") {
        SolveResult r = solve({want("tensorflow==2.10")},
                              machine(std::nullopt, {}, {gcc("10.5.0")}), tables().know());
        REQUIRE(r.pick);
        CHECK(has_note(r, "no NVIDIA driver found: the driver check is skipped"));
        CHECK(has_note(r, "no GPU seen: the GPU architecture check is skipped"));
        CHECK(has_reason(*r.pick, Constraint::Framework,
                         "tensorflow==2.10 was tested with CUDA 11.2 and cuDNN 8.1"));
        CHECK(
            has_reason(*r.pick, Constraint::HostCompiler, "gcc 10.5.0 is one CUDA 11.2.2 accepts"));
        CHECK(has_reason(*r.pick, Constraint::Cudnn, "cuDNN 8.1.1.33-cuda11.2, not installed yet"));
    }
    SECTION("PyTorch: no cuDNN paired, and why") {
        FrameworkWant w = installed("pytorch", "2.5.1", "12.4");
        w.own_cudnn = "/venv/site-packages/nvidia/cudnn/lib, cuDNN 9.1.0.70";
        SolveResult r = solve({w}, machine("580.95.05", {h200}, {gcc("12.2.0")}), tables().know());
        REQUIRE(r.pick);
        CHECK_FALSE(r.pick->cudnn);
        CHECK(has_reason(*r.pick, Constraint::Framework,
                         "was built with CUDA 12.4 (torch.version.cuda)"));
        CHECK(has_reason(
            *r.pick, Constraint::Cudnn,
            "cuDNN: none paired: PyTorch brings its own (/venv/site-packages/nvidia/cudnn/lib"));
        CHECK(has_reason(*r.pick, Constraint::Driver,
                         "driver 580.95.05 runs CUDA 12.4.1 (it needs 550.54.15 or newer)"));
        CHECK(has_reason(*r.pick, Constraint::Gpu, "builds for sm_90 (NVIDIA H200)"));
        CHECK(r.notes.empty());
    }
    SECTION(
        "a driver below the toolkit's own minimum runs it through minor-version compatibility") {
        SolveResult r = solve({want("torch==2.5")}, machine("470.82.01", {a100}, {gcc("11.4.0")}),
                              tables().know());
        REQUIRE(r.pick);
        CHECK(
            has_reason(*r.pick, Constraint::Driver, "older than CUDA 11.8.0's minimum 520.61.05"));
    }
    SECTION("an old toolkit on a new GPU: PTX JIT said") {
        SolveResult r = solve({want("tensorflow==2.4")},
                              machine("580.95.05", {h200}, {gcc("9.4.0")}), tables().know());
        REQUIRE(r.pick);
        CHECK(has_reason(*r.pick, Constraint::Gpu, "compute_80, will be JIT-compiled"));
    }
}

TEST_CASE("use --for: PyTorch's own cuDNN and NCCL wheels are selected exactly") {
    FrameworkWant w = installed("pytorch", "2.5.1", "12.4");
    w.own_cudnn_build = parse_cudnn_id("9.1.0.70-cuda12");
    w.own_cudnn_folder = "/venv/site-packages/nvidia/cudnn";
    w.own_nccl_build = parse_nccl_id("2.21.5-cuda12.4");
    w.own_nccl_folder = "/venv/site-packages/nvidia/nccl";
    // Another installed cuDNN of CUDA 12, which a spec like 12.4+9 could have matched.
    const MachineFacts m =
        machine("580.95.05", {h200}, {gcc("12.2.0")}, {"12.4.1"}, {"9.8.0.87-cuda12"});
    SECTION("both wheels: the spec names each build, and the line says why") {
        SolveResult r = solve({w}, m, tables().know());
        REQUIRE(r.pick);
        CHECK(r.pick->own_builds);
        CHECK(r.pick->spec().str() == "12.4.1+9.1.0.70-cuda12+nccl2.21.5-cuda12.4");
        CHECK(has_reason(*r.pick, Constraint::Cudnn,
                         "cuDNN 9.1.0.70-cuda12 and NCCL 2.21.5-cuda12.4: the own wheels of "
                         "pytorch 2.5.1 in /venv (/venv/site-packages/nvidia/cudnn, "
                         "/venv/site-packages/nvidia/nccl), imported and selected"));
        CHECK_FALSE(has_reason(*r.pick, Constraint::Cudnn, "none paired"));
    }
    SECTION("a cuDNN wheel alone") {
        w.own_nccl_build.reset();
        SolveResult r = solve({w}, m, tables().know());
        REQUIRE(r.pick);
        CHECK(r.pick->spec().str() == "12.4.1+9.1.0.70-cuda12");
        CHECK(has_reason(*r.pick, Constraint::Cudnn, "cuDNN 9.1.0.70-cuda12: the own wheels of"));
    }
    SECTION("a wheel of another CUDA major is not selected: today's choice") {
        w.own_cudnn_build = parse_cudnn_id("9.1.0.70-cuda11");
        w.own_nccl_build = parse_nccl_id("2.21.5-cuda11.8");
        SolveResult r = solve({w}, m, tables().know());
        REQUIRE(r.pick);
        CHECK_FALSE(r.pick->own_builds);
        CHECK(r.pick->spec().str() == "12.4.1");
        CHECK(has_reason(*r.pick, Constraint::Cudnn, "cuDNN: none paired"));
    }
    SECTION("two frameworks bringing different builds: refused, naming both") {
        FrameworkWant other = w;
        other.label = "pytorch 2.5.1 in /other";
        other.own_cudnn_build = parse_cudnn_id("9.8.0.87-cuda12");
        SolveResult r = solve({w, other}, m, tables().know());
        REQUIRE_FALSE(r.pick);
        CHECK(r.ruled_out_by == Constraint::Cudnn);
        CHECK(r.why.find("pytorch 2.5.1 in /venv brings cuDNN 9.1.0.70-cuda12") !=
              std::string::npos);
        CHECK(r.why.find("pytorch 2.5.1 in /other brings cuDNN 9.8.0.87-cuda12") !=
              std::string::npos);
    }
    SECTION("two frameworks bringing the same builds: selected once") {
        FrameworkWant other = w;
        other.label = "pytorch 2.5.1 in /other";
        SolveResult r = solve({w, other}, m, tables().know());
        REQUIRE(r.pick);
        CHECK(r.pick->spec().str() == "12.4.1+9.1.0.70-cuda12+nccl2.21.5-cuda12.4");
    }
}

TEST_CASE("use --for: nothing fits, and the constraint that rules everything out") {
    struct Row {
        const char* name;
        std::vector<FrameworkWant> wants;
        MachineFacts machine;
        registry::Platform platform;
        Constraint constraint;
        const char* why; // a part of the line
    };
    const std::vector<Row> rows{
        {"framework: a CPU build of torch",
         {installed("pytorch", "2.5.1", std::nullopt)},
         machine(std::nullopt, {}, {}),
         registry::Platform::Linux,
         Constraint::Framework,
         "is a CPU build (torch.version.cuda is None)"},
        {"framework: a CPU build of TensorFlow",
         {installed("tensorflow", "2.10.0", std::nullopt)},
         machine(std::nullopt, {}, {}),
         registry::Platform::Linux,
         Constraint::Framework,
         "its build_info.py names no CUDA"},
        {"framework: torch 2.5 and TensorFlow 2.10 share no CUDA",
         {want("torch==2.5"), want("tensorflow==2.10")},
         machine(std::nullopt, {}, {}),
         registry::Platform::Linux,
         Constraint::Framework,
         "(CUDA 11.8, 12.1, 12.4) and tensorflow==2.10 (CUDA 11.2) share no CUDA version"},
        {"framework: a CUDA no registry row and no install knows",
         {installed("pytorch", "2.5.1", "10.9")},
         machine(std::nullopt, {}, {}),
         registry::Platform::Linux,
         Constraint::Framework,
         "no release of CUDA 10.9"},
        {"platform: TensorFlow 2.11 has no native Windows GPU build",
         {want("tensorflow==2.11")},
         machine(std::nullopt, {}, {}),
         registry::Platform::Windows,
         Constraint::Platform,
         "no native Windows GPU build"},
        {"driver: TensorFlow 2.15 (CUDA 12.2) on driver 470",
         {want("tensorflow==2.15")},
         machine("470.82.01", {a100}, {gcc("12.2.0")}),
         registry::Platform::Linux,
         Constraint::Driver,
         "driver 470.82.01 is too old for CUDA 12.2 (as tensorflow==2.15 needs): the oldest of "
         "them needs 525.60.13"},
        {"gpu: torch 2.9 on a Tesla K80 (no CUDA 12 or 13 builds for sm_37)",
         {want("torch==2.9")},
         machine("580.95.05", {k80}, {gcc("12.2.0")}),
         registry::Platform::Linux,
         Constraint::Gpu,
         "cannot build for sm_37 (Tesla K80, compute capability 3.7)"},
        {"cudnn: a TensorFlow built with a cuDNN no registry row knows",
         {installed("tensorflow", "2.10.0", "11.2", "7.9")},
         machine(std::nullopt, {}, {gcc("10.5.0")}),
         registry::Platform::Linux,
         Constraint::Cudnn,
         "no cuDNN 7.9 build for CUDA 11.2.2"},
    };
    for (const auto& row : rows) {
        INFO(row.name);
        MachineFacts m = row.machine;
        m.platform = row.platform;
        SolveResult r = solve(row.wants, m, tables().know());
        CHECK_FALSE(r.pick);
        CHECK(r.ruled_out_by == row.constraint);
        CHECK(r.why.find(row.why) != std::string::npos);
        INFO(r.why);
    }
}

TEST_CASE(
    "use --for: the host compiler is never a reason to refuse, only a note with what to install") {
    // TensorFlow 2.10 wants CUDA 11.2, which takes gcc up to 10 and clang up to 11: neither is
    // here.
    MachineFacts m = machine(std::nullopt, {}, {gcc("12.2.0"), clang("14.0.6")});
    SolveResult r = solve({want("tensorflow==2.10")}, m, tables().know());
    REQUIRE(r.pick);
    CHECK(r.pick->toolkit.str().rfind("11.2", 0) == 0);
    CHECK(has_reason(*r.pick, Constraint::HostCompiler,
                     "no installed host compiler is one CUDA 11.2.2 accepts (installed: gcc "
                     "12.2.0, clang 14.0.6"));
    CHECK(has_reason(*r.pick, Constraint::HostCompiler, "the framework's wheels need none"));
    // Nothing is known of the distribution's packages: the versions are named, no package.
    CHECK(has_reason(*r.pick, Constraint::HostCompiler, "install a compiler CUDA 11.2"));
    // The distribution packages some of them: those are named, and only those.
    std::vector<std::string> asked;
    m.packaged =
        [&](const std::vector<std::string>& names) -> std::optional<std::set<std::string>> {
        asked = names;
        return std::set<std::string>{"clang-11"};
    };
    r = solve({want("tensorflow==2.10")}, m, tables().know());
    REQUIRE(r.pick);
    CHECK(std::find(asked.begin(), asked.end(), "g++-10") != asked.end());
    CHECK(has_reason(*r.pick, Constraint::HostCompiler, "e.g. clang-11 (apt install clang-11)"));
    for (const auto& reason : r.pick->reasons)
        CHECK(reason.text.find("apt install g++") == std::string::npos);
    // ...and none at all (Debian 12 for CUDA 11.2): the versions, and that it packages none.
    m.packaged = [](const std::vector<std::string>&) {
        return std::optional<std::set<std::string>>(std::set<std::string>{});
    };
    r = solve({want("tensorflow==2.10")}, m, tables().know());
    REQUIRE(r.pick);
    CHECK(has_reason(*r.pick, Constraint::HostCompiler, "packages none of them"));
}

TEST_CASE("use --for: framework arguments") {
    const auto& reg = tables().reg;
    FrameworkWant tf = parse_framework_want(reg, "tensorflow==2.10");
    CHECK(tf.name == "tensorflow");
    CHECK(tf.version == v("2.10"));
    CHECK(tf.label == "tensorflow==2.10");
    CHECK_FALSE(tf.built_cuda);
    CHECK(parse_framework_want(reg, "torch==2.5").name == "pytorch");
    CHECK(parse_framework_want(reg, "PyTorch==2.5.1").version == v("2.5.1"));
    CHECK(parse_framework_want(reg, "tensorflow-gpu==2.10.1").name == "tensorflow");
    CHECK(*parse_framework_want(reg, "torch==2.5.1+cu121").built_cuda == v("12.1"));
    CHECK(parse_framework_want(reg, "torch").version ==
          registry::framework_releases(reg, "pytorch").back()->version);

    auto error_of = [&](const char* text) -> std::string {
        try {
            parse_framework_want(reg, text);
        } catch (const FrameworkInputError& e) {
            return e.what();
        }
        return "(no error)";
    };
    CHECK(
        error_of("tensorflw==2.10").find("unknown framework tensorflw; did you mean tensorflow?") !=
        std::string::npos);
    CHECK(error_of("jax==0.4").find("cvm knows torch (pytorch) and tensorflow") !=
          std::string::npos);
    CHECK(error_of("torch==2.50")
              .find("torch 2.50 is not in cvm's registry; did you mean torch==2.5?") !=
          std::string::npos);
    CHECK(error_of("tensorflow==3.1").find("it knows 1.13 to") != std::string::npos);
    CHECK(error_of("tensorflow=2.10").find("write NAME==VERSION") != std::string::npos);
    CHECK(error_of("torch==").find("no version after ==") != std::string::npos);
    CHECK(error_of("torch==two").find("is not a version") != std::string::npos);
    CHECK(error_of("torch==2.5+cu999")
              .find("torch 2.5 has no +cu999 build (it ships cu118, cu121, cu124)") !=
          std::string::npos);
    CHECK(error_of("tensorflow==2.10+cu112").find("is not a CUDA build tag") != std::string::npos);
}

TEST_CASE("use --for: among toolkits equal otherwise, one whose nvcc takes an installed host "
          "compiler ranks first") {
    // torch 2.9 has CUDA 12.6, 12.8 and 13.0 builds. CUDA 13.0's nvcc refuses Visual Studio 2017
    // (_MSC_VER 1916); 12.8's takes it (host_compilers.toml).
    MachineFacts m = machine("580.95.05", {h200}, {CompilerId{CompilerKind::Msvc, v("19.16.27048")}});
    m.platform = registry::Platform::Windows;
    SolveResult r = solve({want("torch==2.9")}, m, tables().know());
    REQUIRE(r.pick);
    CHECK(r.pick->toolkit.str().rfind("12.8", 0) == 0);
    // Visual Studio 2022 (1940) fits every one of them: the newest.
    m.compilers = {CompilerId{CompilerKind::Msvc, v("19.40.33811")}};
    r = solve({want("torch==2.9")}, m, tables().know());
    REQUIRE(r.pick);
    CHECK(r.pick->toolkit.str().rfind("13.0", 0) == 0);
}
