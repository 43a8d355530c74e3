// `cvm install --locked` (cvm-install): install_locked of src/install run in this folder, and
// what it says printed.
#include "cli/lock_install.h"

#include "cli/context.h"
#include "store/resolve.h"
#include "install/locked_install.h"

namespace cvm::cli {

std::vector<install::InstallResult> install_locked(install::StoreInstaller& installer,
                                                   const Store& store,
                                                   const registry::Registry* reg,
                                                   bool allow_lock_urls) {
    std::error_code ec;
    fs::path cwd = fs::current_path(ec);
    install::LockedInstall done = install::install_locked(
        installer, store, reg, allow_lock_urls, cwd, [](const std::string& line) { note(line); });
    try {
        Selection sel = current_selection(store, std::nullopt);
        if (sel.origin != Selection::Origin::None && !sel.spec.system) {
            std::string selected = resolve(store, sel.spec).active();
            if (selected != done.active)
                note("note: " + sel.origin_text() + " selects " + selected +
                     " here, not the locked " + done.active + "; `cvm use " + done.active +
                     "` pins it");
        }
    } catch (const std::exception&) {
    }
    return done.results;
}

} // namespace cvm::cli
