#include "selection_checks.h"

#include "cuda_libraries.h"
#include "diagnose_support.h"
#include "file_system_view.h"

#include "layouts/folder_facts.h"
#include "spec/spec.h"
#include "platform/platform.h"
#include "registry/registry.h"

#include <string_view>

namespace cvm::doctor {

namespace {

using Os = platform::Os;

std::optional<Version> header_version(const Entry& e, const char* file,
                                      std::optional<Version> (*reader)(std::string_view)) {
    std::vector<std::string> dirs = e.include_dirs;
    if (dirs.empty()) dirs.push_back("include");
    for (const auto& d : dirs) {
        auto text = platform::read_file(e.path / fs::u8path(d) / file, 1 << 20);
        if (text) return reader(*text);
    }
    return std::nullopt;
}

// The version in the file name of `lib` inside the entry's library folders (Linux).
std::optional<std::string> entry_library_version(const Entry& e, const std::string& lib,
                                                 const FileSystemView& files) {
    for (const auto& d : e.lib_dirs) {
        auto v = linux_library_version((e.path / fs::u8path(d) / lib).u8string(), files);
        if (v) return v->version;
    }
    return std::nullopt;
}

bool same_prefix(const Version& a, const Version& b, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        const unsigned x = i < a.parts.size() ? a.parts[i] : 0;
        const unsigned y = i < b.parts.size() ? b.parts[i] : 0;
        if (x != y) return false;
    }
    return true;
}

} // namespace

void check_selection(const DoctorInputs& in, DoctorReport& report) {
    switch (in.selection.origin) {
    case Selection::Origin::None:
        add_finding(report, Severity::note, "nothing-selected",
                    "no CUDA version is selected here; the report shows what programs load now",
                    "`cvm use SPEC` (see `cvm list`)");
        return;
    default:
        break;
    }
    if (in.selection.spec.system) {
        add_finding(report, Severity::note, "system-selected",
                    "'system' is selected (" + in.selection.origin_text() +
                        "): cvm changes nothing and the machine's own libraries load");
        return;
    }
    if (!in.resolved)
        add_finding(report, Severity::error, "selection-unresolved",
                    in.resolve_error.empty()
                        ? "the selection " + in.selection.spec.str() + " names nothing installed"
                        : in.resolve_error,
                    in.selection.forced.empty()
                        ? "`cvm install " + in.selection.spec.str() +
                              "`, or `cvm use` another version"
                        : "`cvm use SPEC` with a release that exists (see `cvm list --available`)");
}

void check_selection_files(const DoctorInputs& in, DoctorReport& report) {
    if (!in.resolved || in.os == Os::Windows)
        return; // DLL names carry only the major; their file versions are NVIDIA's own
    const FileSystemView& files = *in.fs;
    const Resolved& r = *in.resolved;
    if (r.cudnn) {
        const Entry& c = *r.cudnn;
        auto header = header_version(c, "cudnn_version.h", cudnn_version_from_header);
        if (!header) header = header_version(c, "cudnn.h", cudnn_version_from_header);
        const std::string lib =
            cudnn_libraries(static_cast<int>(c.version.major()), TargetOs::linux_gnu).front().file;
        auto lib_version = entry_library_version(c, lib, files);
        if (header && lib_version) {
            auto lv = parse_version(*lib_version, 1, 4);
            if (lv && lv->parts.size() >= 3 && !same_prefix(*header, *lv, 3))
                add_finding(report, Severity::error, "header-library-mismatch",
                            "cuDNN " + c.id + ": the headers say " + header->str() + " but " + lib +
                                " is " + *lib_version +
                                ": programs compiled against these headers load another cuDNN",
                            "reinstall the build (`cvm uninstall " + c.id +
                                "` then `cvm install "
                                "...`) so headers and "
                                "libraries come from one "
                                "archive");
        }
    }
    const Entry& t = r.toolkit;
    auto cuda_h = header_version(t, "cuda.h", toolkit_version_from_cuda_h);
    if (cuda_h && !same_prefix(*cuda_h, t.version, 2))
        add_finding(report, Severity::error, "header-library-mismatch",
                    "toolkit " + t.id + ": include/cuda.h says CUDA " + cuda_h->str() +
                        " but the toolkit is " + t.version.str(),
                    "reinstall the toolkit: `cvm uninstall " + t.id + "` then `cvm install cuda " +
                        t.version.str() + "`");
    const std::string cudart =
        cudart_library(static_cast<int>(t.version.major()), static_cast<int>(t.version.minor()),
                       TargetOs::linux_gnu)
            .file;
    auto cudart_version = entry_library_version(t, cudart, files);
    if (cudart_version) {
        auto v = parse_version(*cudart_version, 1, 4);
        if (v && v->parts.size() >= 2 && !same_prefix(*v, t.version, 2))
            add_finding(report, Severity::error, "header-library-mismatch",
                        "toolkit " + t.id + ": " + cudart + " is version " + *cudart_version +
                            ", not CUDA " + t.version.str(),
                        "reinstall the toolkit: `cvm uninstall " + t.id +
                            "` then `cvm install cuda " + t.version.str() + "`");
    }
}

void check_cudnn_for_toolkit(const DoctorInputs& in, DoctorReport& report) {
    if (!in.resolved || !in.resolved->cudnn) return;
    const Entry& t = in.resolved->toolkit;
    const Entry& c = *in.resolved->cudnn;
    bool supported = true;
    std::string range;
    bool known = false;
    if (in.registry) {
        if (auto span = registry::cudnn_supported_cuda(*in.registry, c.id)) {
            known = true;
            const Version tk{{t.version.major(), t.version.minor()}};
            supported = !(tk < span->first) && !(span->second < tk);
            range = span->first.str() + " to " + span->second.str();
        }
    }
    if (!known) {
        if (auto id = c.cudnn_id()) {
            supported = id->serves(t.version);
            range = "CUDA " + id->cuda.str();
        }
    }
    if (!supported)
        add_finding(report, Severity::error, "cudnn-cuda-mismatch",
                    "cuDNN " + c.id + " supports " + range + ", not the selected toolkit " + t.id,
                    "`cvm install cudnn " + c.version.str() + " --cuda " +
                        std::to_string(t.version.major()) + "." +
                        std::to_string(t.version.minor()) + "`, or select a toolkit it supports");
}

} // namespace cvm::doctor
