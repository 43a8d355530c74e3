#include "driver_checks.h"

#include "diagnose_support.h"

#include "platform/platform.h"
#include "registry/registry.h"

namespace cvm::doctor {

namespace {

using Os = platform::Os;

// Where no kernel module answers (driver-library-only) nothing runs on a GPU here anyway: a
// build machine, so the old library is a warning; with a GPU, programs fail, an error.
void add_driver_too_old(DoctorReport& report, const DriverInfo& d, const Entry& t,
                        const std::string& need, const std::string& fix) {
    const std::string too_old =
        "driver " + *d.version + " is too old for CUDA " + t.version.str() + " (needs " + need;
    if (d.user_space_only)
        add_finding(report, Severity::warning, "driver-too-old",
                    too_old + "): no kernel module answers here, so nothing runs on a GPU now, "
                              "but with this driver library programs would fail with \"CUDA "
                              "driver version is insufficient for CUDA runtime version\"",
                    fix);
    else
        add_finding(report, Severity::error, "driver-too-old",
                    too_old + "): programs fail with \"CUDA driver version is insufficient for "
                              "CUDA runtime version\"",
                    fix);
}

} // namespace

void check_driver(const DoctorInputs& in, DoctorReport& report) {
    const DriverInfo& d = in.driver;
    if (!d.version) {
        std::string why = d.notes.empty() ? "" : " (" + d.notes.front() + ")";
        add_finding(report, Severity::note, "no-driver",
                    "no NVIDIA driver or GPU found" + why +
                        ": fine on a build machine, but programs cannot use a GPU here");
        return;
    }
    if (d.user_space_only)
        add_finding(report, Severity::note, "driver-library-only",
                    "the NVIDIA driver's user-space library is version " + *d.version + " (" +
                        d.source +
                        ") but no kernel module or nvidia-smi answers: no GPU here, or the "
                        "driver's kernel module is not loaded");
    else if (d.smi_ran && d.gpus.empty())
        add_finding(report, Severity::note, "no-gpu",
                    "driver " + *d.version + " is installed but nvidia-smi lists no GPU");
    if (!in.resolved || !in.registry) return;
    auto have = registry::parse_driver_version(*d.version);
    if (!have) return;
    const Entry& t = in.resolved->toolkit;
    const auto platform =
        in.os == Os::Windows ? registry::Platform::Windows : registry::Platform::Linux;
    auto need =
        registry::minimum_driver(*in.registry, t.version, platform, registry::DriverRule::Toolkit);
    if (!need || !(have->value < need->driver.value)) return;
    auto floor = registry::minimum_driver(*in.registry, t.version, platform,
                                          registry::DriverRule::MinorCompat);
    const std::string fix = "install NVIDIA driver " + need->driver.text +
                            " or newer, or select an older toolkit (`cvm use`)";
    if (floor && !(have->value < floor->driver.value)) {
        add_finding(report, Severity::warning, "driver-minor-compat",
                    "driver " + *d.version + " is older than CUDA " + t.version.str() +
                        " asks for (" + need->driver.text +
                        "); it runs through minor-version compatibility (from " +
                        floor->driver.text + "), without features that need the newer driver",
                    fix);
    } else {
        add_driver_too_old(report, d, t, need->driver.text, fix);
    }
}

} // namespace cvm::doctor
