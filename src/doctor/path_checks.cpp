#include "path_checks.h"

#include "diagnose_support.h"
#include "file_system_view.h"

#include "activation/environment.h"
#include "platform/platform.h"
#include "text/path_list.h"

#include <filesystem>
#include <set>

namespace cvm::doctor {

void check_path(const DoctorInputs& in, DoctorReport& report) {
    const FileSystemView& files = *in.fs;
    auto path = env_get(in.env, "PATH", in.os);
    if (!path) return;
    ForeignDirs rules;
    rules.probe_filesystem = true;
    // cvm's own shims (an nvcc each) are no toolkit.
    if (!in.store_layers.empty())
        rules.shims_dir = std::filesystem::u8path(in.store_layers.front()) / "shims";
    std::vector<std::string> toolkits;
    std::set<std::string> seen;
    for (const auto& dir : split_path_list(*path, in.os)) {
        if (dir.empty() || !is_foreign_cuda_dir(dir, rules, in.os, false)) continue;
        auto real = files.real_path(dir);
        std::string key = folded(real.value_or(dir), in.os);
        if (in.os == platform::Os::Linux) {
            // A toolkit is where its programs really are: a merged view's bin (a folder of
            // links, its nvcc maybe cvm's shim) is the toolkit's, whose bin an Lmod cuda module
            // leaves behind the cudnn module's view.
            for (const char* program : {"ptxas", "nvcc"})
                if (auto file = files.real_path(dir + "/" + program)) {
                    key = folded(path_dirname(*file), in.os);
                    break;
                }
        }
        if (in.os == platform::Os::Windows) {
            // One toolkit however many of its folders are on PATH (NVIDIA's installer adds
            // bin and libnvvp); a folder of cuDNN DLLs without nvcc.exe (cvm puts cuDNN's bin
            // on PATH) is no toolkit.
            const std::string marker = "\\nvidia gpu computing toolkit\\cuda\\";
            const auto at = key.find(marker);
            if (at != std::string::npos)
                key = key.substr(0, key.find('\\', at + marker.size()));
            else if (files.is_file(dir + "\\nvcc.exe"))
                key = key.substr(0, key.find_last_of('\\'));
            else
                continue;
        }
        if (seen.insert(key).second) toolkits.push_back(dir);
    }
    if (toolkits.size() < 2) return;
    std::string list;
    for (const auto& t : toolkits)
        list += (list.empty() ? "" : ", ") + t;
    add_finding(report, Severity::warning, "several-cuda-on-path",
                std::to_string(toolkits.size()) + " CUDA toolkits' folders are on PATH (" + list +
                    "): the first one's tools run, whatever the project needs",
                "keep one (cvm's environment removes the others: " + shell_hint(in.os, in.env) +
                    ")");
}

void check_cuda_path(const DoctorInputs& in, DoctorReport& report) {
    if (!in.resolved) return;
    const FileSystemView& files = *in.fs;
    std::optional<std::string> wanted;
    for (const auto& c : in.selected_changes)
        if (c.name == "CUDA_PATH") wanted = c.value;
    if (!wanted) return;
    std::vector<std::string> wrong;
    std::string shown;
    for (const char* name : {"CUDA_PATH", "CUDA_HOME"}) {
        auto value = env_get(in.env, name, in.os);
        if (!value || value->empty()) continue;
        auto a = files.real_path(*value), b = files.real_path(*wanted);
        if (folded(a.value_or(*value), in.os) == folded(b.value_or(*wanted), in.os)) continue;
        wrong.push_back(name);
        shown += (shown.empty() ? "" : ", ") + std::string(name) + "=" + *value;
    }
    if (wrong.empty()) return;
    add_finding(report, Severity::warning, "cuda-path-elsewhere",
                shown + " in this shell, not the selection's " + *wanted +
                    ": build systems (CMake, setup.py, MSBuild) use the toolkit it names",
                shell_hint(in.os, in.env));
}

} // namespace cvm::doctor
