// cvm doctor's NCCL findings: the copy a program loads and the releases it hides, PyTorch's own
// NCCL against it, a build for another CUDA major, /dev/shm, and the variables that switch NCCL's
// transports off.
#include <catch2/catch.hpp>

#include "compat/nccl_checks.h"
#include "compat/torch_arch.h"
#include "store/resolve.h"
#include "test_support.h"

using namespace cvm;
using namespace cvm::compat;
using cvm::test::TempDir;
using cvm::test::write_file;

namespace {

std::string lib(const TempDir& t, const std::string& rel, const std::string& version,
                const std::string& cuda) {
    fs::path p = t.path / rel;
    write_file(p, "lib NCCL version " + version + "+cuda" + cuda + std::string(1, '\0'));
    return p.string();
}

doctor::LibraryLoad row(const std::string& scenario, const std::string& path,
                        const std::string& mechanism) {
    doctor::LibraryLoad l;
    l.scenario = scenario;
    l.family = "nccl";
    l.role = "nccl";
    l.name = "libnccl.so.2";
    l.main = true;
    l.path = path;
    l.real_path = path;
    l.mechanism = mechanism;
    l.version = "2.28"; // what a file name said; the check puts the library's own release
    return l;
}

const doctor::Finding* find(const std::vector<doctor::Finding>& all, const std::string& code) {
    for (const auto& f : all)
        if (f.code == code) return &f;
    return nullptr;
}

} // namespace

TEST_CASE("NCCL findings: the copy loaded, the releases it hides, PyTorch's own NCCL") {
    TempDir t("nccl");
    const std::string apt = lib(t, "usr/lib/x86_64-linux-gnu/libnccl.so.2", "2.28.3", "13.0");
    const std::string wheel = lib(t, "site/nvidia/nccl/lib/libnccl.so.2", "2.28.9", "13.0");
    doctor::DoctorReport report;
    report.os = platform::Os::Linux;
    auto now = row("current", apt, "ld.so.cache");
    now.shadowed = {wheel};
    report.libraries.push_back(now);
    doctor::PythonInfo py;
    py.executable = "/venv/bin/python3";
    doctor::FrameworkInstall torch;
    torch.name = "pytorch";
    torch.version = "2.11.0+cu130";
    torch.cuda = "13.0";
    torch.own_nccl_library = wheel;
    torch.own_nccl_version = "2.28.9";
    py.frameworks.push_back(torch);
    report.python = py;
    NcclMachine m;
    m.torch_runtime_nccl = "2.28.9";
    auto found = nccl_findings(report, m);
    CHECK(report.libraries[0].version == std::optional<std::string>("2.28.3"));
    const auto* shadowed = find(found, "nccl-shadowed");
    REQUIRE(shadowed);
    CHECK(shadowed->severity == doctor::Severity::warning);
    CHECK(shadowed->message.find(apt + " (NCCL 2.28.3, ld.so.cache)") != std::string::npos);
    CHECK(shadowed->message.find(wheel + " (NCCL 2.28.9)") != std::string::npos);
    CHECK(shadowed->fix.find("dpkg -S " + apt) != std::string::npos);
    const auto* two = find(found, "nccl-two-versions");
    REQUIRE(two);
    CHECK(two->message.find("loads NCCL 2.28.3") != std::string::npos);
    CHECK(two->message.find("PyTorch 2.11.0+cu130 uses NCCL 2.28.9") != std::string::npos);
    CHECK(two->fix.find("cvm import " + (t.path / "site" / "nvidia" / "nccl").string()) !=
          std::string::npos);
    CHECK(two->fix.find("cvm use CUDA+nccl2.28.9") != std::string::npos);
    const auto* own = find(found, "framework-own-nccl");
    REQUIRE(own);
    CHECK(own->severity == doctor::Severity::note);
    CHECK(own->message.find("torch.cuda.nccl.version()") != std::string::npos);
    // Without torch imported, the wheel's library says its release.
    m.torch_runtime_nccl.reset();
    CHECK(find(nccl_findings(report, m), "framework-own-nccl")
              ->message.find("its library's own text") != std::string::npos);
    // The same release everywhere: nothing but the note.
    report.libraries[0] =
        row("current", lib(t, "opt/libnccl.so.2", "2.28.9", "13.0"), "LD_LIBRARY_PATH");
    found = nccl_findings(report, m);
    CHECK_FALSE(find(found, "nccl-shadowed"));
    CHECK_FALSE(find(found, "nccl-two-versions"));
    CHECK(find(found, "framework-own-nccl"));
    // Windows: no NCCL, nothing said.
    report.os = platform::Os::Windows;
    CHECK(nccl_findings(report, m).empty());
}

TEST_CASE("NCCL findings: another CUDA major, /dev/shm, transports switched off") {
    TempDir t("nccl");
    doctor::DoctorReport report;
    report.os = platform::Os::Linux;
    Resolved r;
    r.toolkit.kind = Kind::Cuda;
    r.toolkit.id = "13.0.2";
    r.toolkit.version = *parse_version("13.0.2");
    Entry n;
    n.kind = Kind::Nccl;
    n.id = "2.21.5-cuda12.4";
    n.version = *parse_version("2.21.5");
    n.cuda = *parse_version("12.4");
    n.path = t.path / "nccl";
    r.nccl = n;
    report.resolved = r;
    NcclMachine m;
    m.shm_bytes = std::uint64_t(64) << 20;
    m.env = {{"NCCL_P2P_DISABLE", "1"},
             {"NCCL_SHM_DISABLE", "0"},
             {"NCCL_IB_DISABLE", "1"},
             {"NCCL_DEBUG", "INFO"}};
    auto found = nccl_findings(report, m);
    const auto* cuda = find(found, "nccl-cuda-mismatch");
    REQUIRE(cuda);
    CHECK(cuda->message.find("the selected NCCL 2.21.5-cuda12.4") != std::string::npos);
    CHECK(cuda->message.find("built for CUDA 12.4, but the selected toolkit is CUDA 13.0.2") !=
          std::string::npos);
    CHECK(cuda->fix.find("cvm list --available nccl 13") != std::string::npos);
    const auto* shm = find(found, "shm-too-small");
    REQUIRE(shm);
    CHECK(shm->message.find("/dev/shm holds only 64 MiB") != std::string::npos);
    CHECK(shm->fix.find("--shm-size=1g") != std::string::npos);
    int disabled = 0;
    for (const auto& f : found)
        if (f.code == "nccl-transport-disabled") {
            ++disabled;
            CHECK(f.severity == doctor::Severity::note);
            CHECK((f.message.rfind("NCCL_P2P_DISABLE=1 is set", 0) == 0 ||
                   f.message.rfind("NCCL_IB_DISABLE=1 is set", 0) == 0));
        }
    CHECK(disabled == 2);
    // Enough /dev/shm, or no NCCL anywhere: no shm finding.
    m.shm_bytes = kNcclShmBytes;
    CHECK_FALSE(find(nccl_findings(report, m), "shm-too-small"));
    m.shm_bytes = std::uint64_t(64) << 20;
    report.resolved->nccl.reset();
    CHECK_FALSE(find(nccl_findings(report, m), "shm-too-small"));
    CHECK_FALSE(find(nccl_findings(report, m), "nccl-cuda-mismatch"));
    // The NCCL a program loads through cvm, when none is selected.
    report.libraries.push_back(
        row("selected", lib(t, "lib/libnccl.so.2", "2.28.3", "12.8"), "LD_LIBRARY_PATH"));
    found = nccl_findings(report, m);
    REQUIRE(find(found, "nccl-cuda-mismatch"));
    CHECK(find(found, "nccl-cuda-mismatch")
              ->message.find("NCCL 2.28.3 a program run through cvm loads") != std::string::npos);
    CHECK(find(found, "shm-too-small"));
    CHECK(file_system_bytes(t.path.string()).value_or(0) > 0);
    CHECK_FALSE(file_system_bytes((t.path / "missing").string()));
}

TEST_CASE("torch.cuda.nccl.version() as the doctor's Python program prints it") {
    CHECK(parse_torch_nccl_output("{\"nccl\": [2, 28, 9]}\n[\"sm_90\"]\n") ==
          std::optional<std::string>("2.28.9"));
    CHECK(parse_torch_nccl_output("warning: x\n{\"nccl\": 2708}\n[]\n") ==
          std::optional<std::string>("2.7.8"));
    CHECK_FALSE(parse_torch_nccl_output("{\"nccl\": null}\n[]\n"));
    CHECK_FALSE(parse_torch_nccl_output("[\"sm_90\"]\n"));
    CHECK(parse_torch_arch_output("{\"nccl\": [2, 28, 9]}\n[\"sm_90\"]\n")->front() == "sm_90");
}
