#include "runtime.h"

#include "names.h"

#include <algorithm>

namespace cvm::probe {
namespace {

// The most telling loader error: one about a file that exists but failed, before "not found".
std::string telling_error(const LibraryInfo& info) {
    for (const auto& a : info.attempts)
        if (!a.error.empty() && a.error.find("No such file") == std::string::npos &&
            a.error.find("(error 126)") == std::string::npos)
            return a.error;
    return info.attempts.empty() ? std::string() : info.attempts.front().error;
}

} // namespace

std::string join(const std::vector<std::string>& items, const std::string& separator) {
    std::string out;
    for (const auto& item : items)
        out += (out.empty() ? "" : separator) + item;
    return out;
}

os::LibraryHandle load_first(const std::vector<std::string>& names, const char* any_symbol,
                             LibraryInfo& info) {
    for (const auto& name : names) {
        std::string error;
        os::LibraryHandle handle = os::open_library(name, error);
        info.attempts.push_back({name, handle ? std::string() : error});
        if (handle) {
            info.name = name;
            info.path = os::library_path(handle, any_symbol);
            if (info.path.empty()) info.path = name;
            return handle;
        }
    }
    return nullptr;
}

void report_not_found(Report& report, const char* what, const char* cache_prefix,
                      const LibraryInfo& info) {
    std::vector<std::string> names;
    for (const auto& a : info.attempts)
        names.push_back(a.name);
    report.add_problem(problem::kLibraryNotFound,
                       std::string(what) + " could not be loaded (tried " + join(names, ", ") +
                           "): " + telling_error(info) +
                           "; the folders searched are listed in the report");
    if (report.searched_folders.empty()) report.searched_folders = os::library_search_folders();
    for (const auto& entry : os::loader_cache_entries(cache_prefix))
        if (std::find(report.cache_entries.begin(), report.cache_entries.end(), entry) ==
            report.cache_entries.end())
            report.cache_entries.push_back(entry);
}

std::string cuda_error_text(const CudartApi& cudart, int error) {
    std::string name;
    if (cudart.GetErrorName) {
        const char* text = cudart.GetErrorName(error);
        if (text) name = text;
    }
    if (name.empty() || name == "unrecognized error code") name = cuda_error_fallback_name(error);
    std::string text = name + " (" + std::to_string(error) + ")";
    if (cudart.GetErrorString) {
        const char* description = cudart.GetErrorString(error);
        if (description && *description) text += ": " + std::string(description);
    }
    return text;
}

} // namespace cvm::probe
