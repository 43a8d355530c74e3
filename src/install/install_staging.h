#pragma once
// The StoreInstaller's staging folder (Staged), and what the files of its installs
// share to fill one and move it into the store: install_staging.cpp (the folder, the version locks,
// the commit), store_install.cpp, install_archive.cpp (archives, NVIDIA's installers, URLs) and
// install_toolkit.cpp (toolkits and cuDNN from NVIDIA's manifests).
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "install/installed_files.h"
#include "store/staging_folder.h"
#include "store/store.h"
#include "install/extract.h"
#include "platform/cleanup_on_signal.h"
#include "platform/platform.h"

namespace cvm::install {

// A staging folder, locked while this process uses it; removed with everything in it, also
// when the process is interrupted (staging_folder.h).
struct Staged {
    StagingFolder folder;
    std::filesystem::path dir; // folder.path()
    // What will be root/ in the entry: path -> the record of the bytes written.
    std::map<std::string, InstalledFile> files;

    explicit Staged(const Store& store) : folder(store, "install", true), dir(folder.path()) {}

    // Records what an extraction wrote below `content` (a folder of it, `extracted` its top),
    // under the path `place` gives (empty: not installed). The first record of a path stays,
    // as merge_into keeps the first file.
    void record(const ExtractResult& result, const std::filesystem::path& extracted,
                const std::filesystem::path& content,
                const std::function<std::string(const std::string&)>& place);
};

// kind_label as a string ("CUDA", "cuDNN", "NCCL"), for messages.
std::string kind_word(Kind k);
// Writes `text` to `p`; throws InstallError (operation) naming the file when it cannot.
void write_file(const std::filesystem::path& p, const std::string& text);
// Moves everything below `from` into `to`, merging folders. Entries that exist in both with
// different contents keep the first and are reported.
void merge_into(const std::filesystem::path& from, const std::filesystem::path& to,
                std::vector<std::string>& conflicts, const std::filesystem::path& top);

} // namespace cvm::install
