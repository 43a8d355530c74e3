// `cvm export lmod|tcl DIR`: environment modules for every toolkit and cuDNN build in the store.
// `cvm export --oci DIR [SPEC]`: a selection as an OCI image layout (src/image/). On Linux the
// image is written by cvm-install, which links libarchive and zlib; cvm hands the command over.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/errors.h"
#include "core/modules.h"
#include "registry/registry.h"
#ifdef CVM_HAVE_IMAGE
#include "image/export_oci.h"
#include "image/gzip_stream.h"
#include "image/image_selection.h"
#include "image/oci_layout.h"
#include "install/error.h"
#include "install/progress.h"
#endif

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

struct ExportArgs {
    std::string format, dir; // lmod|tcl DIR; with --oci, `format` holds the SPEC
    std::string oci, tag, base;
    bool runtime = false, json = false;
};

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

#ifdef CVM_HAVE_IMAGE

// --base LAYOUT[:TAG]: a folder that exists is a layout without a tag; else the tag follows the
// last ':'.
std::pair<fs::path, std::optional<std::string>> base_argument(const std::string& text) {
    std::error_code ec;
    if (fs::is_directory(fs::u8path(text), ec))
        return {fs::absolute(fs::u8path(text), ec), std::nullopt};
    auto colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0)
        throw UsageError(
            "export: --base " + printable(text) +
            " is not a folder; name an OCI image layout, e.g. --base ./ubuntu:22.04 (made by "
            "`skopeo copy docker://ubuntu:22.04 oci:ubuntu:22.04`)");
    std::string tag = text.substr(colon + 1);
    if (!image::is_valid_tag(tag))
        throw UsageError("export: --base " + printable(text) + ": '" + printable(tag) +
                         "' is not a valid tag");
    return {fs::absolute(fs::u8path(text.substr(0, colon)), ec), tag};
}

fs::path destination(const std::string& dir) {
    std::error_code ec;
    fs::path p = fs::absolute(fs::u8path(dir), ec).lexically_normal();
    if (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
    return p;
}

// "cannot write DIR: the disk is full (120 MB free in /data); free some space": the room left
// where DIR is (its nearest folder that exists).
std::string with_free_space(const std::string& line, const fs::path& dir) {
    std::error_code ec;
    fs::path at = dir;
    while (at.has_relative_path() && !fs::exists(at, ec))
        at = at.parent_path();
    fs::space_info s = fs::space(at, ec);
    auto semicolon = line.find("; ");
    if (ec || semicolon == std::string::npos) return line;
    return line.substr(0, semicolon) + " (" + std::to_string(s.available >> 20) + " MB free in " +
           at.u8string() + ")" + line.substr(semicolon);
}

std::string percent(std::uint64_t part, std::uint64_t whole) {
    if (whole == 0) return "0%";
    return std::to_string((part * 100 + whole / 2) / whole) + "%";
}

void export_oci_command(const ExportArgs& a) {
    using install::Progress;
    if (!a.tag.empty() && !image::is_valid_tag(a.tag))
        throw UsageError("export: '" + printable(a.tag) +
                         "' is not a valid --tag (letters, digits, '_', '.' and '-', at most 128, "
                         "not starting with "
                         "'.' or '-'); see cvm help export");
    image::ExportOptions o;
    o.dir = destination(a.oci);
    if (!a.tag.empty()) o.tag = a.tag;
    if (!a.base.empty()) std::tie(o.base, o.base_tag) = base_argument(a.base);
    o.runtime = a.runtime;
    o.threads = image::GzipStream::default_threads();
    Store store = open_store();
    std::optional<std::string> spec;
    if (!a.format.empty()) spec = a.format;
    Resolved r = resolve_selection(store, current_selection(store, spec));
    auto progress = quiet_flag() ? std::make_unique<Progress>(false, true) : Progress::for_stderr();
    o.progress = progress.get();
    image::ExportResult res;
    try {
        res = image::export_oci(store, r, o);
    } catch (const install::InstallError& e) {
        if (e.exit_code() == 2) throw UsageError("export: " + std::string(e.what()), e.code());
        throw Failure("export: " + std::string(e.what()), e.code());
    } catch (const fs::filesystem_error& e) {
        std::string code = error_code_of(e.code());
        std::string line = system_error_line(e);
        if (code == "no_space") line = with_free_space(line, o.dir);
        throw Failure("export: " + line, code);
    }
    progress.reset();
    if (a.json) {
        nlohmann::json doc;
        doc["dir"] = res.dir.u8string();
        doc["tag"] = res.tag;
        doc["reference"] = "oci:" + res.dir.u8string() + ":" + res.tag;
        doc["selection"] = res.selection;
        doc["prefix"] = image::kPrefix;
        doc["runtime"] = a.runtime;
        doc["architecture"] = res.architecture;
        doc["manifest"] = res.manifest_digest;
        doc["config"] = res.config_digest;
        doc["layer"] = {{"digest", res.layer.digest}, {"diff_id", res.layer.diff_id},
                        {"size", res.layer.size},     {"tar_size", res.layer.tar_size},
                        {"files", res.files},         {"bytes", res.bytes}};
        doc["left_out"] = {{"files", res.left_out_files}, {"bytes", res.left_out_bytes}};
        doc["size"] = res.image_size;
        doc["env"] = res.env;
        doc["new_layout"] = res.new_layout;
        doc["replaced"] = res.replaced;
        doc["skipped"] = res.skipped;
        doc["base"] = nullptr;
        if (res.base)
            doc["base"] = {{"layout", res.base->layout.u8string()},
                           {"tag", res.base->tag},
                           {"manifest", res.base->manifest_digest},
                           {"layers", res.base->layers}};
        print_json(doc);
        return;
    }
    for (const auto& s : res.skipped)
        note("skipped " + s + ": not a file, folder or link");
    std::string where = res.dir.u8string() + ":" + res.tag;
    note("wrote the image " + where + " (manifest " + res.manifest_digest + "): " + res.selection +
         ", " + Progress::format_bytes(res.bytes) + " in " + std::to_string(res.files) +
         " files under " + image::kPrefix + ", a layer of " +
         Progress::format_bytes(res.layer.size) + " compressed" +
         (res.base
              ? " on " + std::to_string(res.base->layers) + " layers of " +
                    res.base->layout.u8string() + (res.base->tag.empty() ? "" : ":" + res.base->tag)
              : "") +
         "; " + Progress::format_bytes(res.image_size) + " in all");
    if (a.runtime)
        note("--runtime left out the compiler, headers, static libraries and samples: " +
             Progress::format_bytes(res.left_out_bytes) + " in " +
             std::to_string(res.left_out_files) + " files (" +
             percent(res.left_out_bytes, res.left_out_bytes + res.bytes) +
             " of the selection's files)");
    note(std::string("note: ") + image::kLicenceNote);
    hint("skopeo copy oci:" + where + " docker://REGISTRY/NAME:" + res.tag,
         "a private registry; `apptainer build cuda.sif oci:" + where + "` for Apptainer");
}

#endif

void export_oci(const ExportArgs& a, bool quiet) {
    check_oci_args(a);
#if defined(CVM_HAVE_IMAGE)
    (void)quiet;
    export_oci_command(a);
#elif defined(CVM_INSTALL_FORWARD)
    std::vector<std::string> args{"export", "--oci", a.oci};
    if (!a.format.empty()) args.push_back(a.format);
    if (!a.tag.empty()) args.insert(args.end(), {"--tag", a.tag});
    if (!a.base.empty()) args.insert(args.end(), {"--base", a.base});
    if (a.runtime) args.push_back("--runtime");
    if (a.json) args.push_back("--json");
    if (quiet) args.push_back("--quiet");
    forward_to_install_program(args);
#else
    (void)quiet;
    throw UsageError(
        "export: --oci: a Windows store holds Windows toolkits, and container images hold Linux "
        "ones; run `cvm export --oci` on Linux");
#endif
}

} // namespace

void register_export(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "export",
        "Write environment modules (Lmod Lua or Tcl) for every toolkit and cuDNN build, or a "
        "selection as an OCI image (--oci)");
    auto a = std::make_shared<ExportArgs>();
    cmd->add_option(
        "format", a->format,
        "lmod (Lua modulefiles) or tcl (Tcl modulefiles); with --oci, the SPEC to export (default: "
        "the selection here)");
    cmd->add_option("dir", a->dir,
                    "the folder to write cuda/, cudnn/ and nccl/ into (for `module use DIR`)");
    auto* oci =
        cmd->add_option(
               "--oci", a->oci,
               "write an OCI image layout into DIR (made when absent or empty, else added to): the "
               "selection under /opt/cvm, its environment in the image's config")
            ->type_name("DIR");
    cmd->add_option(
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
    cmd->callback([a, oci] {
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
