#pragma once
// A selection as an image holds it, under one prefix (/opt/cvm): each part (the toolkit, the
// cuDNN build, ...) at <prefix>/<kind>/<id>, as the store keeps them, and the merged view at
// <prefix>/views/<name>, whose links point at those folders. Its environment, labels and tag.
#include <cstdint>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "activation/environment.h"
#include "store/resolve.h"
#include "image/layer_plan.h"

namespace cvm::image {

inline constexpr const char* kPrefix = "/opt/cvm";
// The files' time when SOURCE_DATE_EPOCH is not set: 1980-01-01 00:00:00 UTC, the earliest a
// zip can hold, so a tree copied out of the image into a zip keeps it.
inline constexpr std::time_t kDefaultEpoch = 315532800;

struct ImagePart {
    Entry entry;        // as the store has it
    std::string layer;  // where its files are in the layer ("opt/cvm/cuda/12.4.1")
    bool walked = true; // false when it lies inside another part's folder (cuDNN inside a toolkit)
};

struct ImageSelection {
    Resolved host;                // the selection as the store has it
    std::vector<ImagePart> parts; // toolkit first
    fs::path view;                // the merged view on this machine (empty: none)
    std::string view_layer; // where it is in the layer ("opt/cvm/views/12.4.1+9.1.0.70-cuda12")
    bool runtime = false;
};

// The parts of `r` in the image, and where its view goes (`view`: ensure_view's answer, or empty
// where needs_merged_view() (activation/view.h) says no: a toolkit's own view, which exists only to
// hand this machine's host compiler to an old nvcc, has no place in an image).
ImageSelection image_selection(const Resolved& r, const fs::path& view, bool runtime);

// The folders the layer is walked from, and how (--runtime; a view's nvcc that is cvm's shim
// becomes a link to the toolkit's nvcc).
std::vector<LayerTree> layer_trees(const ImageSelection& s);
PlanOptions plan_options(const ImageSelection& s);

// The selection's environment in the image, from the same functions as `cvm env` (layout_of on
// this machine's folders, each path then moved to its place under the prefix, and
// compute_environment), applied to `env` (the base image's Env, else a plain PATH), plus
// NVIDIA_REQUIRE_CUDA=cuda>=X.Y for NVIDIA's container toolkit. No host compiler is handed over:
// this machine's is not the container's. With --runtime, nothing names the left-out bin or
// include folders.
std::vector<std::string> image_env(const ImageSelection& s, const std::vector<std::string>& env);

// The labels naming what the image holds: each part's id and where it came from (archives'
// URLs and SHA-256, or the imported folder), the selection, the prefix, and the licence note.
std::map<std::string, std::string> image_labels(const ImageSelection& s);

// The tag an export gets without --tag: the ids in the characters a tag allows
// ("cuda12.4.1-cudnn9.1.0.70-cuda12", "-runtime" added).
std::string default_tag(const ImageSelection& s);

// The image's architecture (amd64, arm64, ...) from the parts' platform, else this machine's.
// Throws install::InstallError (input) for a part of another operating system.
std::string image_architecture(const ImageSelection& s);

// SOURCE_DATE_EPOCH when set and not empty (a whole number of seconds), else kDefaultEpoch. Throws
// install::InstallError (input) for a value that is not one.
std::time_t source_date_epoch();

// The note printed after an export and written into the image's labels.
extern const char* const kLicenceNote;

} // namespace cvm::image
