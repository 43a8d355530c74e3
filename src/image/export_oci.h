#pragma once
// `cvm export --oci DIR`: a selection as an OCI image layout. The layer is written as a stream
// (layer_writer.h) into the layout's blobs under a temporary name; base layers are copied, the
// config and manifest written, and only then are the blobs given their names and the tag
// recorded in index.json. A new layout is made in a staging folder beside DIR and renamed into
// place; into an existing layout, the new blobs are renamed into place and index.json replaced
// last. A failure (a full disk, Ctrl-C) leaves the folder as it was.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "store/resolve.h"
#include "store/store.h"
#include "image/layer_plan.h"
#include "image/layer_writer.h"

namespace cvm::install {
class Progress;
}

namespace cvm::image {

namespace fs = std::filesystem;

struct ExportOptions {
    fs::path dir;                   // the image layout to write (made when absent or empty)
    std::optional<std::string> tag; // default_tag() when not given
    std::optional<fs::path> base;   // an image layout to stack the layer on
    std::optional<std::string> base_tag;
    bool runtime = false;
    install::Progress* progress = nullptr;
    unsigned threads = 0; // compression threads (GzipStream::default_threads())
};

struct ExportResult {
    fs::path dir;
    std::string tag;
    std::string manifest_digest, config_digest;
    WrittenLayer layer;
    std::uint64_t files = 0, bytes = 0;                   // in the layer: files and their bytes
    std::uint64_t left_out_files = 0, left_out_bytes = 0; // --runtime
    std::vector<std::string> skipped;
    std::vector<LayerPlan::Outside> outside; // taken through the links of cvm's assembled roots
    std::uint64_t image_size = 0; // manifest, config and every layer, compressed
    std::string architecture;
    std::string selection; // CVM_ACTIVE
    std::vector<std::string> env;
    bool new_layout = false;
    bool replaced = false; // the tag named another image before
    struct Base {
        fs::path layout;
        std::string tag, manifest_digest;
        std::size_t layers = 0;
    };
    std::optional<Base> base;
};

// Throws install::InstallError (input: a DIR that is something else, a bad base, a store of
// another platform; operation: the rest) and std::filesystem::filesystem_error for what the file
// system refuses, naming DIR.
ExportResult export_oci(const Store& store, const Resolved& selection,
                        const ExportOptions& options);

} // namespace cvm::image
