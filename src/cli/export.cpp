// `cvm export lmod|tcl DIR`: environment modules for every toolkit and cuDNN build in the store.
// `cvm export --oci DIR [SPEC]`: a selection as an OCI image layout, written by export_oci.cpp in
// cvm-install (it links libarchive and zlib); cvm hands the command over.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/errors.h"
#include "cli/install_backend.h"
#include "modules/modules.h"
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
        if (auto r = registry::minimum_driver(*reg, tk.version, registry::Platform::Linux,
                                              DriverRule::Toolkit))
            f.release = r->driver.text;
        if (auto r = registry::minimum_driver(*reg, tk.version, registry::Platform::Linux,
                                              DriverRule::MinorCompat))
            f.compat = r->driver.text;
        return f;
    };
}

void export_modules_command(const ExportArgs& a) {
    ModuleFormat f;
    if (a.format.empty())
        throw UsageError("export: missing FORMAT; e.g. cvm export lmod ~/modulefiles", "usage");
    if (a.format == "lmod" || a.format == "lua")
        f = ModuleFormat::Lua;
    else if (a.format == "tcl")
        f = ModuleFormat::Tcl;
    else
        throw UsageError(
            "export: unknown module format '" + printable(a.format) +
            "'; use `cvm export lmod DIR`, `cvm export tcl DIR` or `cvm export --oci DIR`");
    if (a.dir.empty())
        throw UsageError("export: missing DIR; e.g. cvm export lmod ~/modulefiles", "usage");
    if (a.dir.find('\n') != std::string::npos)
        throw UsageError("export: DIR must be a folder name without line breaks");
    std::error_code ec;
    fs::path out = fs::absolute(fs::u8path(a.dir), ec);
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
    if (a.json) {
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
        note("the store holds no toolkit: nothing to export; run `cvm install` or `cvm import DIR` "
             "first");
        return;
    }
    note("wrote " + std::to_string(r.written.size()) + " modules into " + out.u8string() +
         "; run `module use " + out.u8string() +
         "` (Lmod or Environment Modules), then e.g. `module load cuda`");
}

// Checks what can be checked before the store is read (the same in cvm and cvm-install).
void check_oci_args(const ExportArgs& a) {
    if (!a.dir.empty())
        throw UsageError(
            "export: unexpected argument '" + printable(a.dir) + "'; see cvm help export", "usage");
    if (a.oci.empty())
        throw UsageError("export: --oci needs a folder; e.g. cvm export --oci ./cuda-image",
                         "usage");
}

void export_oci(const ExportArgs& a, bool quiet) {
    check_oci_args(a);
    if (install_backend().export_oci) return install_backend().export_oci(a);
    if (!install_backend().forward)
        throw UsageError(
            "export: --oci: a Windows store holds Windows toolkits, and container images hold Linux "
            "ones; run `cvm export --oci` on Linux");
    std::vector<std::string> args{"export", "--oci", a.oci};
    if (!a.format.empty()) args.push_back(a.format);
    if (!a.tag.empty()) args.insert(args.end(), {"--tag", a.tag});
    if (!a.base.empty()) args.insert(args.end(), {"--base", a.base});
    if (a.runtime) args.push_back("--runtime");
    if (a.json) args.push_back("--json");
    if (quiet) args.push_back("--quiet");
    forward_to_install_program(args);
}

} // namespace

void register_export(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "export",
        "Write environment modules (Lmod Lua or Tcl) for every toolkit and cuDNN build, or a "
        "selection as an OCI image (--oci). Forms: cvm export FORMAT DIR, cvm export --oci DIR [SPEC]");
    auto a = std::make_shared<ExportArgs>();
    cmd->add_option(
        "format", a->format,
        "lmod (Lua modulefiles) or tcl (Tcl modulefiles); with --oci, this place holds the SPEC to "
        "export (default: the selection here)");
    cmd->add_option("dir", a->dir,
                    "the folder to write cuda/, cudnn/ and nccl/ into (for `module use DIR`)");
    auto* oci =
        cmd->add_option(
               "--oci", a->oci,
               "write an OCI image layout into DIR (made when absent or empty, else added to): the "
               "selection under /opt/cvm, its environment in the image's config")
            ->type_name("DIR");
    auto* tag = cmd->add_option(
           "--tag", a->tag,
           "the image's tag (default: made from the ids, e.g. cuda12.4.1-cudnn9.1.0.70-cuda12)")
        ->type_name("NAME");
    cmd->add_option(
           "--base", a->base,
           "stack the layer on an image of an OCI image layout (e.g. written by `skopeo copy "
           "docker://ubuntu:22.04 oci:ubuntu:22.04`)")
        ->type_name("LAYOUT")
        ->option_text("LAYOUT[:TAG]");
    cmd->add_flag("--runtime", a->runtime,
                  "leave out the compiler, headers, static libraries and samples");
    cmd->add_flag("--json", a->json, "print one JSON document");
    cmd->callback([a, oci, tag] {
        // `--tag ''` would otherwise fall back to the default tag without a word (issue 33).
        if (tag->count() > 0 && a->tag.empty())
            throw UsageError("export: --tag is empty; give a tag (e.g. --tag cuda12.4) or leave "
                             "--tag out for the one made from the ids",
                             "usage");
        if (oci->count() > 0) {
            export_oci(*a, quiet_flag());
            return;
        }
        if (!a->tag.empty() || !a->base.empty() || a->runtime)
            throw UsageError("export: --tag, --base and --runtime go with --oci; e.g. cvm export "
                             "--oci DIR --runtime",
                             "usage");
        export_modules_command(*a);
    });
}

} // namespace cvm::cli
