#include "store/resolve.h"
#include "doctor/diagnose.h"
#include "doctor/report.h"

#include "binary/binary_test_support.h"
#include "test_support.h"
#include "registry/registry.h"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace cvm;
using namespace cvm::doctor;
using namespace cvm::binary;
using namespace cvm::binary::test;

namespace {

const Finding* find(const DoctorReport& r, const std::string& code) {
    for (const auto& f : r.findings)
        if (f.code == code) return &f;
    return nullptr;
}

std::vector<const Finding*> all(const DoctorReport& r, const std::string& code) {
    std::vector<const Finding*> out;
    for (const auto& f : r.findings)
        if (f.code == code) out.push_back(&f);
    return out;
}

std::string codes(const DoctorReport& r) {
    std::string s;
    for (const auto& f : r.findings)
        s += std::string(to_string(f.severity)) + ":" + f.code + " (" + f.message + ")\n";
    return s;
}

const LibraryLoad* load(const DoctorReport& r, const std::string& scenario,
                        const std::string& name) {
    for (const auto& l : r.libraries)
        if (l.scenario == scenario && l.name == name) return &l;
    return nullptr;
}

// A Linux machine in a temporary folder: a CUDA 11.2 toolkit and a cuDNN 8.1.0 build made of
// real shared objects, a "system" library folder, and the inputs cvm doctor would gather.
struct LinuxMachine {
    TempDir t;
    std::string cc;
    std::string proto; // a real shared object, copied under every library name
    std::string toolkit, cudnn, system_dir;
    DoctorInputs in;
    RealFileSystem fs;

    explicit LinuxMachine(std::string compiler) : cc(std::move(compiler)) {
        proto = t.str("proto/libproto.so");
        auto built = build_shared_object(cc, proto, "-Wl,-soname,libproto.so");
        INFO(built.output);
        REQUIRE(built.ok());
        toolkit = t.mkdir("cuda-11.2").string();
        cudnn = t.mkdir("cudnn-8.1.0").string();
        system_dir = t.mkdir("usr/lib").string();
        versioned(toolkit + "/lib64", "libcudart.so.11.0", "libcudart.so.11.2.152");
        versioned(toolkit + "/lib64", "libcublas.so.11", "libcublas.so.11.4.1.1043");
        versioned(toolkit + "/lib64", "libcublasLt.so.11", "libcublasLt.so.11.4.1.1043");
        write_file(toolkit + "/include/cuda.h", "#define CUDA_VERSION 11020\n");
        for (const char* lib :
             {"libcudnn", "libcudnn_ops_infer", "libcudnn_ops_train", "libcudnn_cnn_infer",
              "libcudnn_cnn_train", "libcudnn_adv_infer", "libcudnn_adv_train"})
            versioned(cudnn + "/lib", std::string(lib) + ".so.8", std::string(lib) + ".so.8.1.0");
        cudnn_header("8.1.0");

        in.os = platform::Os::Linux;
        in.fs = &fs;
        in.cwd = t.str();
        in.selection.origin = Selection::Origin::ProjectFile;
        in.selection.file = t.str(".cudaversion");
        in.selection.line = 1;
        in.selection.spec = parse_spec("11.2.2+8.1.0.77");
        Resolved r;
        r.toolkit.kind = Kind::Cuda;
        r.toolkit.id = "11.2.2";
        r.toolkit.version = *parse_version("11.2.2");
        r.toolkit.path = toolkit;
        r.toolkit.include_dirs = {"include"};
        r.toolkit.lib_dirs = {"lib64"};
        r.toolkit.bin_dirs = {"bin"};
        Entry c;
        c.kind = Kind::Cudnn;
        c.id = "8.1.0.77-cuda11.2";
        c.version = *parse_version("8.1.0.77");
        c.cuda = *parse_version("11.2");
        c.path = cudnn;
        c.include_dirs = {"include"};
        c.lib_dirs = {"lib"};
        r.cudnn = c;
        in.resolved = r;
        in.selection_dirs = {toolkit, cudnn};
        set_selected_ld_path(toolkit + "/lib64:" + cudnn + "/lib");
        in.env["PATH"] = "/usr/bin:/bin";
        in.linux_default_dirs = {system_dir};
        auto self = read_elf_file("/proc/self/exe");
        REQUIRE(self);
        in.linux_abi = *self.info;
        in.driver.version = "460.27.03";
        in.driver.source = "test";
        in.driver.gpus = {"Test GPU"};
        in.driver.smi_ran = true;
    }

    // dir/link -> dir/real, with `real` a copy of the prototype object.
    void versioned(const std::string& dir, const std::string& link, const std::string& real) {
        fs::create_directories(dir);
        fs::copy_file(proto, dir + "/" + real, fs::copy_options::overwrite_existing);
        std::error_code ec;
        fs::remove(dir + "/" + link, ec);
        fs::create_symlink(real, dir + "/" + link);
    }
    void cudnn_header(const std::string& version) {
        auto v = *parse_version(version);
        write_file(cudnn + "/include/cudnn_version.h",
                   "#define CUDNN_MAJOR " + std::to_string(v.parts[0]) + "\n#define CUDNN_MINOR " +
                       std::to_string(v.parts[1]) + "\n#define CUDNN_PATCHLEVEL " +
                       std::to_string(v.parts[2]) + "\n");
    }
    void set_selected_ld_path(const std::string& value) {
        in.selected_changes = {{"CUDA_PATH", toolkit},
                               {"CUDA_HOME", toolkit},
                               {"LD_LIBRARY_PATH", value},
                               {"CVM_ACTIVE", "11.2.2+8.1.0.77-cuda11.2"}};
    }
    // The current shell as cvm would set it up.
    void activate() {
        for (const auto& c : in.selected_changes)
            in.env[c.name] = *c.value;
    }
};

} // namespace

TEST_CASE("doctor: a healthy selection", "[doctor][diagnose]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler: skipping");
        return;
    }
    LinuxMachine m(*cc);
    m.activate();
    auto r = diagnose(m.in);
    INFO(codes(r));
    CHECK(r.healthy());
    const auto* cudnn = load(r, "selected", "libcudnn.so.8");
    REQUIRE(cudnn);
    REQUIRE(cudnn->path);
    CHECK(*cudnn->path == m.cudnn + "/lib/libcudnn.so.8");
    CHECK(cudnn->version == std::optional<std::string>("8.1.0"));
    CHECK(cudnn->mechanism == "LD_LIBRARY_PATH");
    CHECK(cudnn->from_selection == std::optional<bool>(true));
    const auto* cudart = load(r, "current", "libcudart.so.11.0");
    REQUIRE(cudart);
    CHECK(cudart->version == std::optional<std::string>("11.2.152"));
    REQUIRE(load(r, "selected", "libcudnn_adv_train.so.8"));

    SECTION("the text report names what loads and says so") {
        auto text = report_text(r, false);
        CHECK(text.find("libcudnn.so.8") != std::string::npos);
        CHECK(text.find("6 sub-libraries") != std::string::npos);
        CHECK(text.find("No problems found.") != std::string::npos);
        CHECK(text.find("\x1b[") == std::string::npos);
        CHECK(report_text(r, true).find("\x1b[") != std::string::npos);
    }
    SECTION("the JSON report has the same content") {
        auto j = report_json(r);
        CHECK(j["healthy"] == true);
        CHECK(j["selection"]["active"] == "11.2.2+8.1.0.77-cuda11.2");
        CHECK(j["selection"]["cudnn"]["id"] == "8.1.0.77-cuda11.2");
        CHECK(j["libraries"].size() == r.libraries.size());
        CHECK(j["driver"]["version"] == "460.27.03");
    }
}

TEST_CASE("doctor: this shell loads another cuDNN than the selection", "[doctor][diagnose]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler: skipping");
        return;
    }
    LinuxMachine m(*cc);
    const std::string old = m.t.mkdir("opt/cudnn-8.0.5/lib").string();
    m.versioned(old, "libcudnn.so.8", "libcudnn.so.8.0.5");
    m.in.env["LD_LIBRARY_PATH"] = old;
    auto r = diagnose(m.in);
    INFO(codes(r));
    const auto* f = find(r, "library-not-selected");
    REQUIRE(f);
    CHECK(f->severity == Severity::warning);
    CHECK(f->message.find(old + "/libcudnn.so.8") != std::string::npos);
    // The fix turns the prompt hook on; it never pins the shell to one version with `cvm env`.
    CHECK(f->fix.find("eval \"$(cvm init bash)\"") != std::string::npos);
    CHECK(f->fix.find("cvm env") == std::string::npos);
    CHECK_FALSE(r.healthy());
    const auto* now = load(r, "current", "libcudnn.so.8");
    REQUIRE(now);
    CHECK(now->version == std::optional<std::string>("8.0.5"));
    CHECK(now->from_selection == std::optional<bool>(false));
}

TEST_CASE("doctor: a missing cuDNN sub-library", "[doctor][diagnose]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler: skipping");
        return;
    }
    LinuxMachine m(*cc);
    m.activate();
    fs::remove(m.cudnn + "/lib/libcudnn_cnn_infer.so.8");
    auto r = diagnose(m.in);
    INFO(codes(r));
    const auto* f = find(r, "sublibrary-missing");
    REQUIRE(f);
    CHECK(f->severity == Severity::error);
    CHECK(f->message.find("libcudnn_cnn_infer.so.8") != std::string::npos);
    CHECK(f->message.find("Could not load library") != std::string::npos);
    CHECK_FALSE(f->fix.empty());

    SECTION("a copy of another build in a system folder fills the gap: mixed sub-libraries") {
        m.versioned(m.system_dir, "libcudnn_cnn_infer.so.8", "libcudnn_cnn_infer.so.8.0.5");
        auto r2 = diagnose(m.in);
        INFO(codes(r2));
        CHECK_FALSE(find(r2, "sublibrary-missing"));
        const auto* mixed = find(r2, "sublibraries-mixed");
        REQUIRE(mixed);
        CHECK(mixed->message.find(m.system_dir) != std::string::npos);
        CHECK(mixed->message.find("8.0.5") != std::string::npos);
        CHECK(report_text(r2, false).find("libcudnn_cnn_infer.so.8") != std::string::npos);
    }
}

TEST_CASE("doctor: a library from a system folder is fixed through its package, never the folder",
          "[doctor][diagnose]") {
    // The machine's own libcublas.so.11 (Debian's nvidia-cuda-toolkit) through its real
    // /etc/ld.so.cache: the selected toolkit lacks it, so even through cvm it comes from there.
    // (Debian lists it in /lib/x86_64-linux-gnu, the folder the issue saw cvm advise removing.)
    auto cache = read_ld_cache_file("/etc/ld.so.cache");
    std::string system_lib;
    if (cache.cache)
        for (const auto* e : cache.cache->find("libcublas.so.11"))
            if (e->path == "/lib/x86_64-linux-gnu/libcublas.so.11" ||
                e->path == "/usr/lib/x86_64-linux-gnu/libcublas.so.11")
                system_lib = e->path;
    auto cc = c_compiler();
    if (!cc || system_lib.empty()) {
        WARN("no C compiler or no libcublas.so.11 of the system in /etc/ld.so.cache: skipping");
        return;
    }
    const std::string system_dir = system_lib.substr(0, system_lib.rfind('/'));
    LinuxMachine m(*cc);
    m.activate();
    fs::remove(m.toolkit + "/lib64/libcublas.so.11");
    m.in.ld_cache = &*cache.cache;
    auto r = diagnose(m.in);
    INFO(codes(r));
    const Finding* f = nullptr;
    for (const auto* each : all(r, "library-outside-selection"))
        if (each->message.rfind("libcublas.so.11", 0) == 0) f = each;
    REQUIRE(f);
    CHECK(f->severity == Severity::error);
    CHECK(f->message.find(system_lib) != std::string::npos);
    CHECK(f->fix.find("dpkg -S " + system_lib) != std::string::npos);
    CHECK(f->fix.find("never " + system_dir + " itself") != std::string::npos);
    // No fix anywhere tells to take a system folder off the loader's list or PATH.
    for (const auto& each : r.findings) {
        INFO(each.fix);
        CHECK(each.fix.find("ld.so.conf") == std::string::npos);
        CHECK(each.fix.find("remove /usr/lib") == std::string::npos);
        CHECK(each.fix.find("remove /lib") == std::string::npos);
    }
}

TEST_CASE("doctor: a library file the loader cannot read", "[doctor][diagnose]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler: skipping");
        return;
    }
    LinuxMachine m(*cc);
    const std::string bad = m.t.mkdir("bad").string();
    write_file(bad + "/libcudnn.so.8", "/* GNU ld script */\nGROUP ( libcudnn.so.8.1.0 )\n");
    m.set_selected_ld_path(bad + ":" + m.toolkit + "/lib64:" + m.cudnn + "/lib");
    auto r = diagnose(m.in);
    INFO(codes(r));
    const auto* f = find(r, "library-unloadable");
    REQUIRE(f);
    CHECK(f->message.find(bad + "/libcudnn.so.8") != std::string::npos);
}

TEST_CASE("doctor: cuDNN headers and libraries of different versions", "[doctor][diagnose]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler: skipping");
        return;
    }
    LinuxMachine m(*cc);
    m.activate();
    m.cudnn_header("8.0.5");
    auto r = diagnose(m.in);
    INFO(codes(r));
    const auto* f = find(r, "header-library-mismatch");
    REQUIRE(f);
    CHECK(f->message.find("8.0.5") != std::string::npos);
    CHECK(f->message.find("8.1.0") != std::string::npos);

    SECTION("a toolkit whose cuda.h is of another release") {
        m.cudnn_header("8.1.0");
        write_file(m.toolkit + "/include/cuda.h", "#define CUDA_VERSION 11000\n");
        auto r2 = diagnose(m.in);
        INFO(codes(r2));
        const auto* g = find(r2, "header-library-mismatch");
        REQUIRE(g);
        CHECK(g->message.find("cuda.h") != std::string::npos);
    }
}

TEST_CASE("doctor: cuDNN built for another CUDA", "[doctor][diagnose]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler: skipping");
        return;
    }
    LinuxMachine m(*cc);
    m.activate();
    m.in.resolved->cudnn->id = "8.1.0.77-cuda10.2";
    m.in.resolved->cudnn->cuda = *parse_version("10.2");
    auto r = diagnose(m.in);
    INFO(codes(r));
    const auto* f = find(r, "cudnn-cuda-mismatch");
    REQUIRE(f);
    CHECK(f->severity == Severity::error);
    CHECK(f->fix.find("--cuda 11.2") != std::string::npos);
}

TEST_CASE("doctor: the driver against the registry's minimum", "[doctor][diagnose]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler: skipping");
        return;
    }
    const std::string registry_dir = (cvm::test::repo_root() / "registry").string();
    if (!fs::exists(registry_dir + "/cuda.toml")) {
        WARN("no registry at " + registry_dir + ": skipping");
        return;
    }
    auto reg = registry::load_registry(registry_dir);
    LinuxMachine m(*cc);
    m.activate();
    m.in.registry = &reg;
    auto need = registry::minimum_driver(reg, m.in.resolved->toolkit.version,
                                         registry::Platform::Linux, registry::DriverRule::Toolkit);
    auto floor =
        registry::minimum_driver(reg, m.in.resolved->toolkit.version, registry::Platform::Linux,
                                 registry::DriverRule::MinorCompat);
    REQUIRE(need);
    REQUIRE(floor);

    SECTION("new enough") {
        m.in.driver.version = need->driver.text;
        auto r = diagnose(m.in);
        INFO(codes(r));
        CHECK_FALSE(find(r, "driver-too-old"));
        CHECK_FALSE(find(r, "driver-minor-compat"));
    }
    SECTION("only through minor-version compatibility") {
        m.in.driver.version = floor->driver.text;
        auto r = diagnose(m.in);
        INFO(codes(r));
        const auto* f = find(r, "driver-minor-compat");
        REQUIRE(f);
        CHECK(f->severity == Severity::warning);
        CHECK(f->fix.find(need->driver.text) != std::string::npos);
    }
    SECTION("too old") {
        m.in.driver.version = "418.39";
        auto r = diagnose(m.in);
        INFO(codes(r));
        const auto* f = find(r, "driver-too-old");
        REQUIRE(f);
        CHECK(f->severity == Severity::error);
    }
    SECTION("too old, read from the user-space library alone (no GPU here) is a warning") {
        m.in.driver.version = "418.39";
        m.in.driver.user_space_only = true;
        auto r = diagnose(m.in);
        INFO(codes(r));
        const auto* f = find(r, "driver-too-old");
        REQUIRE(f);
        CHECK(f->severity == Severity::warning);
        CHECK(f->message.find("no kernel module answers") != std::string::npos);
        CHECK(f->message.find('\n') == std::string::npos);
        CHECK(f->fix.find(need->driver.text) != std::string::npos);
    }
    SECTION("no driver at all is a note") {
        m.in.driver = DriverInfo{};
        auto r = diagnose(m.in);
        INFO(codes(r));
        const auto* f = find(r, "no-driver");
        REQUIRE(f);
        CHECK(f->severity == Severity::note);
        CHECK(r.healthy());
    }
}

TEST_CASE("doctor: several toolkits on PATH and CUDA_PATH elsewhere", "[doctor][diagnose]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler: skipping");
        return;
    }
    LinuxMachine m(*cc);
    m.activate();
    const std::string other = m.t.mkdir("cuda-10.2/bin").string();
    write_file(other + "/nvcc", "#!/bin/sh\n");
    write_file(m.toolkit + "/bin/nvcc", "#!/bin/sh\n");
    m.in.env["PATH"] = m.toolkit + "/bin:" + other + ":/usr/bin";
    m.in.env["CUDA_PATH"] = m.t.str("cuda-10.2");
    auto r = diagnose(m.in);
    INFO(codes(r));
    const auto* several = find(r, "several-cuda-on-path");
    REQUIRE(several);
    CHECK(several->message.find(other) != std::string::npos);
    const auto* cuda_path = find(r, "cuda-path-elsewhere");
    REQUIRE(cuda_path);
    CHECK(cuda_path->message.find("cuda-10.2") != std::string::npos);
}

TEST_CASE("doctor: frameworks in the active Python", "[doctor][diagnose]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler: skipping");
        return;
    }
    LinuxMachine m(*cc);
    m.activate();
    PythonInfo py;
    py.executable = "/usr/bin/python3";
    py.version = "3.10.12";
    FrameworkInstall tf;
    tf.name = "tensorflow";
    tf.version = "2.15.0";
    tf.cuda = "12.2";
    tf.cudnn = "8";
    FrameworkInstall torch;
    torch.name = "pytorch";
    torch.version = "2.1.2+cu121";
    torch.cuda = "12.1";
    torch.own_cudnn_dir = "/site/nvidia/cudnn/lib";
    torch.own_cudnn_version = "8.9.2.26";
    py.frameworks = {tf, torch};
    m.in.python = py;
    auto r = diagnose(m.in);
    INFO(codes(r));
    auto mismatches = all(r, "framework-cuda-mismatch");
    REQUIRE(mismatches.size() == 2);
    // TensorFlow uses the machine's CUDA libraries: an error. PyTorch brings its own: a warning.
    CHECK(mismatches[0]->severity == Severity::error);
    CHECK(mismatches[0]->fix.find("cvm use 12.2+8") != std::string::npos);
    CHECK(mismatches[1]->severity == Severity::warning);
    // Its own cuDNN 8.9.2 found by DT_RUNPATH (or none): the selected 8.1's sub-libraries come first
    // on cvm's LD_LIBRARY_PATH, a release PyTorch refuses (issue 40).
    const auto* refused = find(r, "framework-cudnn-refused");
    REQUIRE(refused);
    CHECK(refused->severity == Severity::error);
    CHECK(refused->message.find("its own front library 8.9.2.26") != std::string::npos);
    CHECK(refused->message.find("libcudnn_ops_infer") != std::string::npos);
    CHECK(refused->fix.find("`cvm import /site/nvidia/cudnn`, then `cvm use 11.2.2+8.9.2.26`") != std::string::npos);
    // Found by DT_RPATH $ORIGIN: it keeps its own, a note.
    m.in.python->frameworks[1].own_cudnn_rpath = true;
    auto r3 = diagnose(m.in);
    INFO(codes(r3));
    const auto* own = find(r3, "framework-own-cudnn");
    REQUIRE(own);
    CHECK(own->severity == Severity::note);
    CHECK(own->message.find("8.9.2.26") != std::string::npos);
    m.in.python->frameworks[1].own_cudnn_rpath = false;

    SECTION("JAX with its CUDA plugin and cuDNN wheel: the same judgement, in XLA's words") {
        FrameworkInstall jax;
        jax.name = "jax";
        jax.version = "0.4.20";
        jax.cuda = "11.8";
        jax.cudnn = "8.6"; // its plugin's lower bound, the cuDNN it was built with
        jax.own_cudnn_dir = "/site/nvidia/cudnn/lib";
        jax.own_cudnn_version = "8.9.2.26";
        m.in.python->frameworks = {jax};
        auto rj = diagnose(m.in);
        INFO(codes(rj));
        CHECK_FALSE(find(rj, "framework-cuda-mismatch")); // CUDA 11 both
        const auto* xla = find(rj, "framework-cudnn-refused");
        REQUIRE(xla);
        CHECK(xla->message.find("JAX 0.4.20 would load a mixed cuDNN") == 0);
        CHECK(xla->message.find("it refuses 8.1.0 (built with 8.6.0") != std::string::npos);
        CHECK(xla->message.find("Loaded runtime CuDNN library: 8.1.0 but source was compiled with: 8.6.0") !=
              std::string::npos);
        CHECK(xla->message.find("torch") == std::string::npos);
        m.in.python->frameworks[0].cudnn = "8.0"; // built with an older minor: accepted, mixed
        auto rm = diagnose(m.in);
        INFO(codes(rm));
        REQUIRE(find(rm, "framework-cudnn-mixed"));
    }
    SECTION("a TensorFlow built for the selected CUDA but another cuDNN major") {
        m.in.python->frameworks = {tf};
        m.in.python->frameworks[0].cuda = "11.2";
        m.in.python->frameworks[0].cudnn = "9";
        auto r2 = diagnose(m.in);
        INFO(codes(r2));
        REQUIRE(find(r2, "framework-cudnn-mismatch"));
    }
}

TEST_CASE("doctor: nothing selected reports what loads now", "[doctor][diagnose]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler: skipping");
        return;
    }
    LinuxMachine m(*cc);
    m.in.selection = Selection{};
    m.in.resolved.reset();
    m.in.selected_changes.clear();
    m.in.env["LD_LIBRARY_PATH"] = m.cudnn + "/lib";
    auto r = diagnose(m.in);
    INFO(codes(r));
    REQUIRE(find(r, "nothing-selected"));
    CHECK(r.healthy());
    const auto* l = load(r, "current", "libcudnn.so.8");
    REQUIRE(l);
    CHECK(l->path);
    CHECK_FALSE(load(r, "current", "libcudnn.so.9")); // not found anywhere: not listed
    CHECK_FALSE(load(r, "selected", "libcudnn.so.8"));
}

TEST_CASE("doctor: a selection that names nothing installed", "[doctor][diagnose]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler: skipping");
        return;
    }
    LinuxMachine m(*cc);
    m.in.resolved.reset();
    m.in.selected_changes.clear();
    m.in.resolve_error = "no installed toolkit matches 12.4; run `cvm install 12.4`";
    auto r = diagnose(m.in);
    const auto* f = find(r, "selection-unresolved");
    REQUIRE(f);
    CHECK(f->severity == Severity::error);
    CHECK(f->message == m.in.resolve_error);
}

TEST_CASE("doctor: a cuDNN in System32 beats the selection on Windows", "[doctor][diagnose]") {
    if (!find_program("x86_64-w64-mingw32-gcc")) {
        WARN("mingw-w64 missing: skipping");
        return;
    }
    TempDir t;
    write_file(t.str("x.c"), "__declspec(dllexport) int f(void) { return 0; }\n");
    auto built = run_command("cd " + shell_quote(t.str()) +
                                 " && x86_64-w64-mingw32-gcc -shared -o proto.dll x.c",
                             t.str());
    INFO(built.output);
    REQUIRE(built.ok());
    const std::string windows = t.mkdir("Windows").string();
    const std::string system32 = t.mkdir("Windows/System32").string();
    const std::string toolkit = t.mkdir("CUDA/v11.2").string();
    const std::string cudnn = t.mkdir("cudnn-8.1.0.77/cuda").string();
    auto put = [&](const std::string& dir, const std::string& name) {
        fs::create_directories(dir);
        fs::copy_file(t.str("proto.dll"), dir + "/" + name, fs::copy_options::overwrite_existing);
    };
    put(toolkit + "/bin", "cudart64_110.dll");
    put(toolkit + "/bin", "cublas64_11.dll");
    put(toolkit + "/bin", "cublasLt64_11.dll");
    for (const char* n : {"cudnn64_8.dll", "cudnn_ops_infer64_8.dll", "cudnn_ops_train64_8.dll",
                          "cudnn_cnn_infer64_8.dll", "cudnn_cnn_train64_8.dll",
                          "cudnn_adv_infer64_8.dll", "cudnn_adv_train64_8.dll"})
        put(cudnn + "/bin", n);

    RealFileSystem view;
    DoctorInputs in;
    in.os = platform::Os::Windows;
    in.fs = &view;
    in.cwd = t.mkdir("project").string();
    in.windows = {windows, system32, windows + "/System"};
    in.selection.origin = Selection::Origin::Global;
    in.selection.spec = parse_spec("11.2+8.1");
    Resolved r;
    r.toolkit.id = "11.2.2";
    r.toolkit.version = *parse_version("11.2.2");
    r.toolkit.path = toolkit;
    r.toolkit.bin_dirs = {"bin"};
    Entry c;
    c.kind = Kind::Cudnn;
    c.id = "8.1.0.77-cuda11.2";
    c.version = *parse_version("8.1.0.77");
    c.cuda = *parse_version("11.2");
    c.path = cudnn;
    c.bin_dirs = {"bin"};
    r.cudnn = c;
    in.resolved = r;
    in.selection_dirs = {toolkit, cudnn};
    in.selected_changes = {{"CUDA_PATH", toolkit},
                           {"PATH", toolkit + "/bin;" + cudnn + "/bin;C:\\Windows"}};
    in.env["PATH"] = "C:\\Windows";
    in.driver.version = "461.09";

    SECTION("healthy through cvm; this shell does not find cuDNN") {
        auto report = diagnose(in);
        INFO(codes(report));
        const auto* sel = load(report, "selected", "cudnn64_8.dll");
        REQUIRE(sel);
        REQUIRE(sel->path);
        CHECK(sel->mechanism == "PATH");
        CHECK(sel->from_selection == std::optional<bool>(true));
        CHECK_FALSE(find(report, "sublibrary-missing"));
        const auto* f = find(report, "library-not-selected");
        REQUIRE(f);
        CHECK(f->severity == Severity::warning);
    }
    SECTION("a copy in System32 wins even through cvm") {
        put(system32, "cudnn64_8.dll");
        auto report = diagnose(in);
        INFO(codes(report));
        bool found = false;
        for (const auto* f : all(report, "library-outside-selection")) {
            CHECK(f->severity == Severity::error);
            found = true;
            CHECK(f->message.find("System32") != std::string::npos);
            CHECK(f->fix.find("delete") != std::string::npos);
        }
        CHECK(found);
        // The sub-libraries still come from the selection: a mixed process.
        REQUIRE(find(report, "sublibraries-mixed"));
    }
    SECTION("a missing sub-library is the \"Could not load cudnn_cnn_infer64_8.dll\" error") {
        fs::remove(cudnn + "/bin/cudnn_cnn_infer64_8.dll");
        auto report = diagnose(in);
        INFO(codes(report));
        const auto* f = find(report, "sublibrary-missing");
        REQUIRE(f);
        CHECK(f->message.find("cudnn_cnn_infer64_8.dll") != std::string::npos);
    }
    SECTION("Python 3.8+ does not search PATH for extension modules") {
        PythonInfo py;
        py.executable = "C:\\Python310\\python.exe";
        py.version = "3.10.11";
        in.python = py;
        in.env["PATH"] = cudnn + "/bin";
        auto report = diagnose(in);
        INFO(codes(report));
        const auto* f = find(report, "python-ignores-path");
        REQUIRE(f);
        CHECK(f->fix.find("os.add_dll_directory") != std::string::npos);
    }
}

TEST_CASE("doctor: CUDA_MODULE_LOADING=EAGER in the report, a note only", "[doctor][diagnose]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler: skipping");
        return;
    }
    LinuxMachine m(*cc);
    m.activate();
    m.in.env["CUDA_MODULE_LOADING"] = "EAGER";
    auto r = diagnose(m.in);
    INFO(codes(r));
    REQUIRE(find(r, "cuda-module-loading-eager"));
    CHECK(r.healthy());
}
