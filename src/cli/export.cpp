// `cvm export lmod|tcl DIR`: environment modules for every toolkit and cuDNN build in the store.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/errors.h"
#include "core/modules.h"
#include "registry/registry.h"

namespace cvm::cli {

namespace {

// The Linux driver floors of each toolkit from the registry, for the modules' load-time check.
std::function<ModuleDriverFloors(const Entry&)> module_driver_floors() {
    auto reg = std::make_shared<registry::Registry>();
    try {
        *reg = registry::load_default_registry();
    } catch (const std::exception&) {
        return {}; // no registry: modules without a driver check
    }
    return [reg](const Entry& tk) {
        ModuleDriverFloors f;
        f.major = tk.version.major();
        using registry::DriverRule;
        if (auto r = registry::minimum_driver(*reg, tk.version, registry::Platform::Linux, DriverRule::Toolkit))
            f.release = r->driver.text;
        if (auto r = registry::minimum_driver(*reg, tk.version, registry::Platform::Linux, DriverRule::MinorCompat))
            f.compat = r->driver.text;
        return f;
    };
}

} // namespace

void register_export(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "export", "Write environment modules (Lmod Lua or Tcl) for every toolkit and cuDNN build");
    auto format = std::make_shared<std::string>();
    auto dir = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("format", *format, "lmod (Lua modulefiles) or tcl (Tcl modulefiles)")
        ->required();
    cmd->add_option("dir", *dir, "the folder to write cuda/ and cudnn/ into (for `module use DIR`)")
        ->required();
    cmd->add_flag("--json", *json, "print one JSON document");
    cmd->callback([format, dir, json] {
        ModuleFormat f;
        if (*format == "lmod" || *format == "lua")
            f = ModuleFormat::Lua;
        else if (*format == "tcl")
            f = ModuleFormat::Tcl;
        else
            throw UsageError("export: unknown module format '" + printable(*format) +
                             "'; use `cvm export lmod DIR` or `cvm export tcl DIR`");
        if (dir->empty() || dir->find('\n') != std::string::npos)
            throw UsageError("export: DIR must be a folder name without line breaks");
        std::error_code ec;
        fs::path out = fs::absolute(fs::u8path(*dir), ec);
        if (fs::exists(out, ec) && !fs::is_directory(out, ec))
            throw UsageError("export: " + out.u8string() +
                             " is not a folder; give a folder to write modules into");
        Store store = open_store();
        ExportResult r;
        try {
            r = export_modules(store, out, f, platform::host_os(), module_driver_floors());
        } catch (const fs::filesystem_error& e) {
            throw Failure("export: " + system_error_line(e));
        }
        if (*json) {
            nlohmann::json doc;
            doc["format"] = f == ModuleFormat::Lua ? "lmod" : "tcl";
            doc["dir"] = out.u8string();
            doc["written"] = nlohmann::json::array();
            for (const auto& p : r.written)
                doc["written"].push_back(p.u8string());
            doc["removed"] = nlohmann::json::array();
            for (const auto& p : r.removed)
                doc["removed"].push_back(p.u8string());
            doc["skipped"] = r.skipped;
            print_json(doc);
            return;
        }
        for (const auto& s : r.skipped)
            note("skipped " + s);
        for (const auto& p : r.removed)
            note("removed " + p.u8string() + " (no longer in the store)");
        if (r.written.empty()) {
            note("the store holds no toolkit: nothing to export; run `cvm install` or `cvm import "
                 "DIR` first");
            return;
        }
        note("wrote " + std::to_string(r.written.size()) + " modules into " + out.u8string() +
             "; run `module use " + out.u8string() +
             "` (Lmod or Environment Modules), then e.g. `module load cuda`");
    });
}

} // namespace cvm::cli
