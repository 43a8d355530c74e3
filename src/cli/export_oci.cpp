// `cvm export --oci DIR [SPEC]` in cvm-install: a selection as an OCI image layout (src/image/).
#include <cstdio>
#include <map>

#include "cli/context.h"
#include "cli/errors.h"
#include "cli/install_backend.h"
#include "store/resolve.h"
#include "registry/registry.h"
#include "image/export_oci.h"
#include "image/gzip_stream.h"
#include "image/image_selection.h"
#include "image/oci_layout.h"
#include "install/error.h"
#include "install/progress.h"

namespace cvm::cli {

namespace {

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

// What the layer took from outside the store through cvm's assembled roots, by the folder it
// came from: "... through the links of imports cvm assembled: 12 files of /usr/include, the
// folder /usr/lib/nvidia-cuda-toolkit/libdevice".
std::string outside_text(const std::vector<image::LayerPlan::Outside>& outside) {
    std::map<std::string, std::size_t> files;
    std::vector<std::string> folders;
    for (const auto& o : outside) {
        if (o.folder)
            folders.push_back(o.host.u8string());
        else
            files[o.host.parent_path().u8string()] += 1;
    }
    std::string text;
    auto add = [&](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
    for (const auto& [dir, n] : files)
        add(std::to_string(n) + (n == 1 ? " file of " : " files of ") + dir);
    for (const auto& f : folders)
        add("the folder " + f);
    return "the layer took from outside the store, through the links of imports cvm assembled: " +
           text;
}

} // namespace

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
        doc["outside"] = nlohmann::json::array();
        for (const auto& taken : res.outside)
            doc["outside"].push_back(
                {{"path", taken.layer}, {"source", taken.host.u8string()}, {"folder", taken.folder}});
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
        note("left out " + s);
    if (!res.outside.empty()) note(outside_text(res.outside));
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


} // namespace cvm::cli
