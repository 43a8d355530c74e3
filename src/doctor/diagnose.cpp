#include "diagnose.h"

#include "driver_checks.h"
#include "framework_install_checks.h"
#include "library_checks.h"
#include "path_checks.h"
#include "selection_checks.h"
#include "variable_checks.h"

#include <algorithm>
#include <utility>

namespace cvm::doctor {

bool DoctorReport::healthy() const {
    return std::none_of(findings.begin(), findings.end(),
                        [](const Finding& f) { return f.severity != Severity::note; });
}

namespace {

// The checks in the order their findings appear (the text and JSON reports keep it).
DoctorReport run_checks(const DoctorInputs& in) {
    DoctorReport report;
    report.os = in.os;
    report.driver = in.driver;
    report.python = in.python;
    report.resolved = in.resolved;
    report.store_layers = in.store_layers;
    if (in.selection.origin != Selection::Origin::None) {
        report.selection_spec = in.selection.spec.str();
        report.selection_origin = in.selection.origin_text();
    }
    check_selection(in, report);
    check_libraries(in, report);
    check_python_dll_rule(in, report);
    check_selection_files(in, report);
    check_cudnn_for_toolkit(in, report);
    check_driver(in, report);
    check_path(in, report);
    check_cuda_path(in, report);
    check_frameworks(in, report);
    for (auto& f : variable_findings(in.env, in.os))
        report.findings.push_back(std::move(f));
    return report;
}

} // namespace

DoctorReport diagnose(const DoctorInputs& inputs) {
    RealFileSystem real;
    DoctorInputs copy = inputs;
    if (!copy.fs) copy.fs = &real;
    return run_checks(copy);
}

} // namespace cvm::doctor
