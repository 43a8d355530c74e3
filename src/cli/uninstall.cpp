#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"
#include "core/shims.h"

namespace cvm::cli {

void register_uninstall(CLI::App& app) {
    auto* cmd = app.add_subcommand("uninstall", "Remove a toolkit or cuDNN build (an imported one is only forgotten)");
    auto id = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("id", *id, "e.g. 11.2.2 or 8.1.0.77-cuda11.2 (see `cvm list`)")->required();
    cmd->add_flag("--json", *json, "print one JSON document");
    cmd->callback([id, json] {
        Kind kind;
        if (parse_toolkit_id(*id)) kind = Kind::Cuda;
        else if (parse_cudnn_id(*id)) kind = Kind::Cudnn;
        else
            throw UsageError("uninstall: '" + printable(*id) + "' is not a toolkit id (11.2.2) or cuDNN id (8.1.0.77-cuda11.2); see `cvm list`");
        Store store = open_store();
        auto e = store.find(kind, *id);
        if (!e)
            throw Failure(std::string(kind_dir(kind)) + " " + *id + " is not installed; see `cvm list`",
                          "not_installed");
        store.remove(kind, *id);
        note(std::string(e->imported ? "forgot " : "removed ") + kind_dir(kind) + " " + *id);
        std::error_code ec;
        fs::path shim = shim_binary();
        if (kind == Kind::Cuda && fs::exists(shim, ec)) rehash(store, shim);
        if (*json)
            print_json({{"removed",
                         {{{"kind", kind_dir(kind)}, {"id", *id}, {"path", e->path.u8string()},
                           {"status", e->imported ? "forgotten" : "removed"}}}}});
    });
}

} // namespace cvm::cli
