#pragma once
// What goes into an exported image's layer: the folders of a selection (toolkit, cuDNN build,
// merged view) walked in sorted order, with the links resolved so that the layer holds real
// files. A link that stays inside its folder stays a link; a link into another folder of the
// layer (the merged view's links, an absolute link inside a toolkit) becomes a relative link to
// where that file is in the layer. A link out of the layer is followed only where cvm made it:
// an assembled root's links into /usr, a conda environment or wheels are replaced by what they
// point to (and named in LayerPlan::outside); any other link out of its folder (planted in an
// imported toolkit: `extras/key -> /root/.ssh/id_rsa`, `include/up -> ../..`) is left out and
// named in LayerPlan::skipped, never read. A file reached twice (the same device and inode) is
// stored once and repeated as a hard link.
//
// Nothing another user owns or can write goes into a layer (trust.h's rules): such a folder or
// file stops the walk with TrustError (config/trust.h), naming it and what to run.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace cvm::image {

namespace fs = std::filesystem;

struct LayerEntry {
    enum class Type { Directory, File, Symlink, Hardlink };
    Type type = Type::Directory;
    std::string path;   // in the layer: '/'-separated, relative, no trailing '/'
    fs::path source;    // File: the file whose bytes it holds
    std::string target; // Symlink: the link's text; Hardlink: the layer path of the first copy
    unsigned mode = 0755;
    std::uint64_t size = 0; // File
};

// A folder of this machine that the layer shows at `layer` ("opt/cvm/cuda/12.4.1"), less the
// entries `leave_out` names (paths inside it).
struct LayerTree {
    fs::path host;
    std::string layer;
    std::vector<std::string> leave_out = {};
    // cvm made this folder (an assembled root, a merged view): its own links out are followed.
    bool made_by_cvm = false;
};

// A file that links lead to on this machine but that the layer must not hold (cvm's shim, which
// a view's nvcc may be): a link to it becomes a link to `layer` instead.
struct LinkRedirect {
    fs::path file;
    std::string layer;
};

struct PlanOptions {
    bool runtime = false; // leave out what only building needs (runtime_filter.h)
    std::vector<LinkRedirect> redirects = {};
};

struct LayerPlan {
    std::vector<LayerEntry> entries; // in the order they are written
    std::uint64_t files = 0, bytes = 0;
    // --runtime: what was left out (runtime_filter.h), files and their bytes.
    std::uint64_t left_out_files = 0, left_out_bytes = 0;
    // Left out: sockets, FIFOs, devices, links out of an entry: "path (a FIFO)".
    std::vector<std::string> skipped;
    // What the layer takes from outside the selection's folders, through the links of a folder
    // cvm made: the host file or folder each link led to, and where the layer has it.
    struct Outside {
        std::string layer;
        fs::path host;
        bool folder = false;
    };
    std::vector<Outside> outside;
};

// Walks `trees` (the folders above each tree's `layer` become folders of the layer too). Throws
// std::filesystem::filesystem_error for a folder or link that cannot be read, TrustError
// (config/trust.h) for one another user could change.
LayerPlan plan_layer(std::vector<LayerTree> trees, const PlanOptions& options);

// True when `p` is `root` or lies under it, compared as text (both absolute and lexically normal;
// a '/' ending `root` is ignored).
bool path_within(const fs::path& p, const fs::path& root);

} // namespace cvm::image
