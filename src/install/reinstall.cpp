// `cvm install --reinstall ID` (reinstall.h): the source an entry is installed again from.
#include "install/reinstall.h"

#include <filesystem>
#include <system_error>

#include "store/resolve.h"
#include "spec/spec.h"
#include "install/error.h"
#include "install/sha256.h"

namespace cvm::install {

namespace fs = std::filesystem;

InstallResult reinstall(StoreInstaller& installer, const Store& store, const std::string& id) {
    auto found = kind_of_id(store, id);
    if (!found)
        fail_input("install --reinstall: '" + printable(id) + "' is not " + kEntryIdForms +
                   "; see `cvm list`");
    Kind kind = *found;
    auto e = store.find(kind, id);
    if (!e)
        fail_input("install --reinstall: " + std::string(kind_dir(kind)) + " " + id +
                   " is not installed; run `cvm install " +
                   (kind == Kind::Cuda ? "cuda " + id : id) + "`");
    if (e->imported)
        fail_input("install --reinstall: " + id + " is imported: cvm did not install its files; " +
                   "reinstall them with their owner (pip, apt) and run `cvm import --detect`");
    if (e->note.rfind("recognised from", 0) == 0 && e->archives.size() == 1 &&
        !e->archives[0].url.empty()) {
        const ArchiveRecord& from = e->archives[0];
        // A legacy cuDNN from NVIDIA's public folder: again from there, held to its sums.
        if (kind == Kind::Cudnn && from.url.find("/redist/cudnn/") != std::string::npos) {
            auto c = parse_cudnn_id(id);
            return installer.install_cudnn(c->version.str(), c->cuda.str());
        }
        // An NCCL from NVIDIA's public folder: again from there, held to its sums.
        if (kind == Kind::Nccl && from.url.find("/redist/nccl/") != std::string::npos) {
            auto n = parse_nccl_id(id);
            return installer.install_nccl(n->version.str(), n->cuda.str());
        }
        if (from.url.find("://") != std::string::npos)
            return installer.install_url(from.url, from.sha256);
        fs::path archive = fs::u8path(from.url);
        std::error_code ec;
        if (!fs::is_regular_file(archive, ec))
            fail_operation("install --reinstall: " + id + " was installed from " + from.url +
                           ", which is gone; run `cvm install --reinstall " + id +
                           "` with it back, or " + "`cvm uninstall " + id +
                           "` and install it again");
        if (!from.sha256.empty() && !sha256_equal(sha256_file(archive), from.sha256))
            fail_operation(
                "install --reinstall: " + from.url + " is no longer the archive " + id +
                " was installed from (sha256 differs); give the right one with `cvm install FILE` "
                "after `cvm uninstall " +
                id + "`");
        // A renamed cuDNN or NCCL archive said its CUDA through --cuda: the same again.
        const bool cuda_given = e->note.find("from --cuda") != std::string::npos;
        return installer.install_file(archive, from.url,
                                      cuda_given ? e->cuda.str() : std::string());
    }
    if (kind == Kind::Cuda) return installer.install_toolkit(id, e->components);
    if (kind == Kind::Nccl) {
        auto n = parse_nccl_id(id);
        return installer.install_nccl(n->version.str(), n->cuda.str());
    }
    auto c = parse_cudnn_id(id);
    return installer.install_cudnn(c->version.str(), c->cuda.str());
}

} // namespace cvm::install
