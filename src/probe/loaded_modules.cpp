// The CUDA, cuDNN and NCCL libraries in the process after the run: where each came from, whether
// it is the selection's, and whether cuDNN's came from one folder.
#include "prober.h"

#include "names.h"

#include <map>

namespace cvm::probe::detail {

void Prober::inspect_modules() {
    std::map<std::string, std::vector<std::string>> cudnn_folders;
    for (const auto& module : os::loaded_modules()) {
        if (!os::is_cuda_module_name(module.real_path) && !os::is_cuda_module_name(module.path))
            continue;
        report_.cuda_modules.push_back(module);
        if (os::is_cudnn_module_name(module.path) || os::is_cudnn_module_name(module.real_path)) {
            const std::string& real = module.real_path;
            auto slash = real.find_last_of("/\\");
            std::string folder = slash == std::string::npos ? "." : real.substr(0, slash);
            cudnn_folders[folder].push_back(real.substr(slash + 1));
        }
    }
    check_selected("cuDNN", options_.expect_cudnn_dirs, os::is_cudnn_module_name);
    check_selected("the CUDA runtime", options_.expect_cudart_dirs, os::is_cudart_module_name);
    if (options_.nccl) check_selected("NCCL", options_.expect_nccl_dirs, os::is_nccl_module_name);
    std::vector<std::string> described;
    for (const auto& [folder, files] : cudnn_folders) {
        report_.cudnn_folders.push_back(folder);
        described.push_back(folder + " (" + join(files, ", ") + ")");
    }
    check_sublibrary_versions();
    if (cudnn_folders.size() > 1)
        report_.add_problem(problem::kMixedCudnnFolders,
                            "cuDNN's libraries come from " + std::to_string(cudnn_folders.size()) +
                                " folders: " + join(described, "; ") +
                                ". A sub-library found first on the search path is mixed with "
                                "another installation's; remove it from LD_LIBRARY_PATH/PATH");
}

void Prober::check_selected(const char* what, const std::vector<std::string>& expected,
                            bool (*is_kind)(const std::string&)) {
    if (expected.empty()) return;
    for (const auto& module : report_.cuda_modules) {
        if (!is_kind(module.real_path) && !is_kind(module.path)) continue;
        const std::string& real = module.real_path;
        auto folder_of = [](const std::string& file) {
            auto slash = file.find_last_of("/\\");
            return slash == std::string::npos ? std::string(".") : file.substr(0, slash);
        };
        // A selection may be a folder of links (an assembled root for a system cuDNN): the
        // folder the loader found the file in counts as well as where the file really is.
        bool inside = false;
        for (const auto& dir : expected)
            inside = inside || os::same_folder(folder_of(real), dir) ||
                     (!module.path.empty() && os::same_folder(folder_of(module.path), dir));
        if (!inside)
            report_.add_problem(problem::kNotSelected,
                                real + " was loaded, but the selected " + what + " is in " +
                                    join(expected, ", ") +
                                    ": the selection lacks this library, or a folder earlier on "
                                    "the search path wins");
    }
}

} // namespace cvm::probe::detail
