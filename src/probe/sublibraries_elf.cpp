// The release of each of cuDNN's sub-libraries on Linux, read from the ELF files (their own
// cudnnGetVersion, version symbols, file names): a set of two releases is a finding.
#include "prober.h"

#include "binary/elf_version_symbol.h"
#include "names.h"

#include <algorithm>
#include <array>
#include <filesystem>

namespace cvm::probe::detail {

// Every cuDNN file of the set: the main library's release from cudnnGetVersion, each loaded
// sub-library's from its own cudnnGetVersion where it exports one, else from the version symbol
// it exports, else from a full version in its real file name. The set is what was loaded plus the
// main library's folder's sub-libraries that were not (one that failed to load is among them).
// Files of two releases fail with CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED or worse.
void Prober::check_sublibrary_versions() {
    struct File {
        std::string path, version, how;
        std::string load_error; // a sub-library that was not loaded and cannot be: why
    };
    std::vector<File> files;
    auto name_of = [](const std::string& path) { return path.substr(path.find_last_of('/') + 1); };
    auto listed = [&](const std::string& path) {
        for (const auto& f : files)
            if (f.path == path || name_of(f.path) == name_of(path)) return true;
        return false;
    };
    auto text_of = [](const std::array<unsigned, 3>& v) {
        return std::to_string(v[0]) + "." + std::to_string(v[1]) + "." + std::to_string(v[2]);
    };
    auto add = [&](const std::string& path, bool loaded) {
        if (listed(path)) return;
        File f{path, "", "", ""};
        // After a sub-library status, one that was not loaded is loaded here to hear why it
        // failed (an undefined symbol of another release's library says which files disagree).
        if (!loaded && !sublibrary_statuses_.empty() && !os::open_library(path, f.load_error))
            f.load_error = f.load_error.empty() ? "it cannot be loaded" : f.load_error;
        size_t (*get_version)(void) = nullptr;
        void* own = loaded ? os::module_own_symbol(path, "cudnnGetVersion") : nullptr;
        if (own) std::memcpy(&get_version, &own, sizeof own);
        std::optional<std::array<unsigned, 3>> v;
        if (get_version &&
            (v = binary::decode_cudnn_version_number(static_cast<std::uint32_t>(get_version()))))
            f.version = text_of(*v), f.how = "its cudnnGetVersion";
        else if (auto sym = binary::read_cudnn_version_symbol_file(path))
            f.version = sym->text(), f.how = sym->name;
        else {
            // libcudnn_ops.so.9.1.0: three numbers after ".so." in the real name.
            std::string name = name_of(path);
            size_t at = name.find(".so.");
            std::string tail = at == std::string::npos ? "" : name.substr(at + 4);
            size_t second = tail.find('.', tail.find('.') + 1);
            if (second != std::string::npos &&
                tail.find_first_not_of("0123456789.") == std::string::npos)
                f.version = tail.substr(0, tail.find('.', second + 1)), f.how = "file name";
        }
        files.push_back(f);
    };
    const std::string main_path = report_.cudnn.path;
    std::string release;
    if (report_.cudnn_version > 0) {
        if (auto v = binary::decode_cudnn_version_number(
                static_cast<std::uint32_t>(report_.cudnn_version))) {
            release = text_of(*v);
            files.push_back(
                {main_path.empty() ? report_.cudnn.name : main_path, release, "cudnnGetVersion"});
        }
    }
    for (const auto& module : report_.cuda_modules) {
        if (!os::is_cudnn_module_name(module.path) && !os::is_cudnn_module_name(module.real_path))
            continue;
        if (module.real_path == main_path) continue;
        add(module.real_path, true);
    }
    // The main library's folder: the sub-libraries it would load that are not loaded.
    int major = cudnn_version_major(report_.cudnn_version);
    if (!main_path.empty() && major > 0) {
        std::error_code ec;
        std::filesystem::path folder = std::filesystem::path(main_path).parent_path();
        std::vector<std::string> names;
        for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end;
             it.increment(ec)) {
            std::string name = it->path().filename().string();
            if (name.rfind("libcudnn_", 0) == 0 && name.size() > 5 &&
                name.compare(name.size() - 4 - std::to_string(major).size(), std::string::npos,
                             ".so." + std::to_string(major)) == 0)
                names.push_back(name);
        }
        std::sort(names.begin(), names.end());
        for (const auto& name : names) {
            std::string real = (folder / name).string();
            std::error_code e2;
            auto canonical = std::filesystem::canonical(real, e2);
            add(e2 ? real : canonical.string(), false);
        }
    }
    if (release.empty())
        for (const auto& f : files)
            if (!f.version.empty()) {
                release = f.version;
                break;
            }
    std::vector<std::string> listing, odd;
    bool mixed = false;
    for (const auto& f : files) {
        listing.push_back(f.path + " " +
                          (f.version.empty() ? "version unknown" : f.version + " (" + f.how + ")") +
                          (f.load_error.empty() ? "" : ", fails to load: " + f.load_error));
        if (!f.load_error.empty() || (!f.version.empty() && f.version != release)) {
            mixed = true;
            odd.push_back(name_of(f.path));
        }
    }
    const std::string fix =
        ". Make every cuDNN file come from one release: " +
        (odd.empty() ? std::string("reinstall the package or wheel of the files of unknown version")
                     : "replace " + join(odd, ", ") + " with cuDNN " + release + "'s") +
        " (`cvm doctor` names the package or wheel that owns each file and the command that "
        "reinstalls it), "
        "or select one complete cuDNN with `cvm use CUDA+CUDNN`";
    // A cuDNN status saying a sub-library failed names the files too.
    bool explained = false;
    for (auto& p : report_.problems) {
        if (p.kind != problem::kCudnnError) continue;
        bool sub = false;
        for (const auto& status : sublibrary_statuses_)
            sub = sub || p.message.find(status) != std::string::npos;
        if (!sub) continue;
        p.kind = problem::kSublibraryMismatch;
        if (explained) continue;
        explained = true;
        p.message +=
            ": a cuDNN sub-library failed to load or is of another release; cuDNN's files: " +
            join(listing, "; ") + fix;
    }
    if (mixed && !explained)
        report_.add_problem(problem::kSublibraryMismatch,
                            "cuDNN's libraries are of different releases: " + join(listing, "; ") +
                                fix);
}

} // namespace cvm::probe::detail
