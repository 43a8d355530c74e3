// StoreInstaller::install_held: the end both pre-manifest paths share (legacy cuDNN archives and
// NVIDIA's installers): the downloaded file is installed under the version lock the caller
// holds, an install of something else than was asked for is undone, and an archive no public
// source gives a sum for has its sum recorded as trusted on first use.
#include "install/error.h"
#include "install/first_use.h"
#include "install/held_download.h"
#include "install/progress.h"
#include "install/store_install.h"

namespace cvm::install {

namespace fs = std::filesystem;

HeldSum StoreInstaller::held_sum(const std::string& name, const std::string& sha256,
                                 std::uint64_t size, const std::string& source) const {
    std::optional<std::string> pinned;
    if (auto it = options_.pinned_sha256.find(name); it != options_.pinned_sha256.end())
        pinned = it->second;
    return held_sum_for(name, sha256, size, source, first_use_file(store_), pinned);
}

InstallResult StoreInstaller::install_held(
    const std::function<InstallResult(const HeldInstall&)>& install, Kind kind,
    const std::string& id, const std::string& name, const std::string& url, const fs::path& file,
    const HeldSum& want) {
    HeldInstall held;
    held.version_lock = std::string(kind_dir(kind)) + "-" + id;
    if (want.first_use) held.first_use_archive = name;
    InstallResult result = install(held);
    auto undo = [&](const std::string& message) {
        if (!result.already_installed) {
            try {
                store_.remove(result.kind, result.id);
            } catch (const std::exception&) {
            }
        }
        fail_input(message, "checksum");
    };
    if (result.kind != kind || result.id != id)
        undo(name + " holds " + kind_label(result.kind) + " " + result.id + ", not " +
             kind_label(kind) + " " + id + "; nothing was installed: check CVM_MIRROR");
    if (want.first_use && !want.record && !result.already_installed) {
        // Trusted on first use: the sum computed beside the extraction is recorded.
        auto entry = store_.find(kind, id);
        if (!entry || entry->archives.empty()) return result;
        std::string message = record_held_first_use(name, url, entry->archives.front().sha256, file,
                                                    first_use_file(store_), store_.locks_dir(), undo);
        if (options_.progress) options_.progress->message(message);
    }
    return result;
}

} // namespace cvm::install
