#include "compat/library_cuda_major.h"

#include <set>

#include "layouts/cudnn_cuda_major.h"

namespace cvm::compat {

namespace fs = std::filesystem;

std::vector<doctor::Finding> library_cuda_major_findings(const doctor::DoctorReport& report) {
    std::vector<doctor::Finding> out;
    if (!report.resolved) return out;
    const Entry& toolkit = report.resolved->toolkit;
    const unsigned want = toolkit.version.major();
    std::set<std::string> seen; // folders already read
    for (const auto& l : report.libraries) {
        if (l.family != "cudnn" || !l.main || !l.path || l.failure) continue;
        const fs::path file = fs::u8path(l.real_path.value_or(*l.path));
        const fs::path dir = file.parent_path();
        if (!seen.insert(dir.u8string()).second) continue;
        unsigned cudnn_major = 0;
        if (l.version) cudnn_major = static_cast<unsigned>(std::atoi(l.version->c_str()));
        auto files = cudnn_library_files(dir, cudnn_major);
        if (files.empty()) files.push_back(file);
        LibrariesCudaMajor found = cuda_major_of_libraries(files);
        if (!found.major || *found.major == want) continue;
        const bool selected = report.resolved->cudnn && l.from_selection == true;
        std::string scope = l.scenario == "current" ? "a program started in this shell"
                                                    : "a program started through cvm";
        out.push_back(
            {doctor::Severity::error, "library-cuda-mismatch",
             scope + " loads " + l.name + " from " + *l.path + ", a cuDNN built for CUDA " +
                 std::to_string(*found.major) + " (" + found.because() +
                 "), not for the selected CUDA " + toolkit.version.str() +
                 ": its calls fail or use another CUDA's libraries",
             selected
                 ? "select a cuDNN built for CUDA " + std::to_string(want) + ": `cvm use " +
                       toolkit.version.str() + "+" + std::to_string(cudnn_major ? cudnn_major : 9) +
                       "` (see `cvm list --available cudnn`)"
                 : "select a cuDNN built for CUDA " + std::to_string(want) +
                       " with the toolkit (`cvm use " + toolkit.id +
                       "+CUDNN`, see `cvm list --available cudnn`), so that programs load it "
                       "instead"});
    }
    return out;
}

} // namespace cvm::compat
