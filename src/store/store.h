#pragma once
// The store: toolkits, cuDNN and NCCL builds side by side, in one writable layer ($CVM_ROOT) and any
// number of read-only layers (CVM_STORE_PATH).
//
//   <layer>/cuda/<toolkit id or name>/entry   key=value description (see Entry)
//   <layer>/cuda/<toolkit id>/root/     the files, for an installed toolkit
//   <layer>/cudnn/<cudnn id>/entry, root/
//   <layer>/nccl/<nccl id>/entry, root/
//   $CVM_ROOT/version                   the global default spec
//   $CVM_ROOT/shims/  views/  .staging/  locks/  cache/   (only ever in the writable layer)
//
// The entry file is entry_format.h's; which entries a spec selects, resolve.h's.
#include <filesystem>
#include <list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "store/assemble.h"
#include "store/entry.h"
#include "spec/spec.h"

namespace cvm {

namespace fs = std::filesystem;

// "<size> <mtime> <path>" of `file` (links followed); empty when it cannot be read.
std::string source_stamp(const fs::path& file);

// What became of an imported entry's folder since it was registered.
enum class SourceState { Ok, Gone, Changed };
// `source` is the imported folder (Entry::origin, else Entry::path); an empty `stamp` (entries
// of older cvm versions) is only checked for the folder. One or two `stat` calls.
SourceState source_state(const fs::path& source, std::string_view stamp);
const char* source_state_name(SourceState s); // "ok", "gone", "changed"

// Why Store::commit_entry put no entry in place: the step that failed, the entry's folder and the
// system's reason. The caller words it (an install and an import each say it their own way).
class EntryCommitError : public std::runtime_error {
public:
    enum class Step {
        Occupied,  // an entry is there and was not to be replaced
        MoveAside, // the entry there could not be moved aside
        MoveIn,    // the staged folder could not be renamed into place (the old entry is back)
    };
    EntryCommitError(Step step, fs::path target, std::error_code ec)
        : std::runtime_error("cannot commit " + target.u8string() + ": " + ec.message()),
          step_(step), target_(std::move(target)), ec_(ec) {}
    Step step() const { return step_; }
    const fs::path& target() const { return target_; }
    const std::error_code& reason() const { return ec_; }

private:
    Step step_;
    fs::path target_;
    std::error_code ec_;
};

// One line of `cvm list`: read from a compact per-layer index without parsing entry files, so
// listing hundreds of entries costs little more than listing two. The views point into the
// Listing that holds it.
struct ListItem {
    Kind kind = Kind::Cuda;
    std::string_view id;
    std::string_view path;   // absolute: Entry::origin when set, else Entry::path
    unsigned version[4] = {};
    unsigned version_parts = 0;
    unsigned cuda[2] = {}; // cuDNN and NCCL
    unsigned cuda_parts = 0;
    bool imported = false;
    // The entry file is missing, unreadable or malformed: `stamp` then says what is wrong (with
    // what to do) and `path` is the entry file; the version is what the id says, if anything.
    bool damaged = false;
    std::string_view stamp;  // Entry::stamp
    // What another user could change of the entry, as `cvm list` says it (entry_trust.h:
    // entry_doubt_text), found when the list index was made; empty when nothing.
    std::string_view doubt;
    size_t layer = 0;
    bool version_has_prefix(const Version& prefix) const;
};

struct Listing {
    std::vector<ListItem> items;          // newest version first, as Store::list
    std::list<std::string> texts;         // the index texts the items point into (stable addresses)
};

class Store {
public:
    // layers[0] is the writable root.
    explicit Store(std::vector<fs::path> layers);
    // CVM_ROOT (default: user data dir / cvm), then the read-only stores of CVM_STORE_PATH,
    // <root>/store-path and the config files' store_path (config.h). Throws ConfigError.
    static Store from_environment();
    static fs::path default_root();

    const fs::path& root() const { return layers_.front(); }
    const std::vector<fs::path>& layers() const { return layers_; }
    fs::path shims_dir() const { return root() / "shims"; }
    fs::path views_dir() const { return root() / "views"; }
    fs::path staging_dir() const { return root() / ".staging"; }
    fs::path locks_dir() const { return root() / "locks"; }
    fs::path cache_dir() const { return cache_dir_of(root()); }
    // The cache folder of the store rooted at `root` ($CVM_ROOT/cache), without reading the
    // config files that list the other layers (the prompt hook needs it when one is broken).
    static fs::path cache_dir_of(const fs::path& root) { return root / "cache"; }
    fs::path global_version_file() const { return root() / "version"; }

    // Ids of one kind across all layers (an id in an earlier layer hides the same id later).
    // Only folder names are read: no entry files.
    std::vector<std::pair<std::string, size_t>> ids(Kind kind) const;
    // Reads one entry; nullopt when not present in any layer.
    std::optional<Entry> find(Kind kind, const std::string& id) const;
    // All entries of a kind, newest version first. Unreadable entries are skipped.
    std::vector<Entry> list(Kind kind) const;
    // The same entries in the same order, with only what `cvm list` prints, and the damaged
    // ones (ListItem::damaged) among them. Throws TrustError for a layer folder it may not trust.
    Listing brief(Kind kind) const;

    // Writes `e` into the writable layer as <root>/<kind>/<id>/entry (atomically, for imports),
    // with an assembled root/ of the links in `plan` when it is not empty (then `e.origin` says
    // where the files are). Throws if it exists unless `replace`.
    void add_imported(const Entry& e, bool replace = false, const std::vector<RootLink>& plan = {}) const;
    // The one writer of an entry into the store's layout (installs, reinstalls and imports):
    // `staged`, a folder on the store's filesystem holding the entry file (and root/), becomes
    // <root>/<kind>/<id> in one rename. With `replace`, the entry there is moved to `aside` first
    // (a killed run's leftover there is removed before) and removed once the new one is in, or
    // put back when the rename fails; without it, an entry there is refused (Occupied). A folder
    // without an entry file (an interrupted removal) is no entry: it is replaced. Returns the
    // entry's folder; throws EntryCommitError, or filesystem_error when the kind's folder cannot
    // be made. Merged views are the caller's to drop.
    fs::path commit_entry(Kind kind, const std::string& id, const fs::path& staged,
                          const fs::path& aside, bool replace) const;
    // Removes an entry (and the files of an installed one) from the writable layer, plus the
    // merged views that use it. Throws if it lives in a read-only layer.
    void remove(Kind kind, const std::string& id) const;
    // Removes what killed installs, imports and removals left in staging_dir() (their staging
    // folders, whose locks no run holds: staging_folder.h), never a running one's. Each of them
    // calls it before it stages.
    void clean_staging() const;

private:
    // Removes the merged views built on `id` (after it is removed or replaced).
    void drop_views_of(Kind kind, const std::string& id) const;
    // Reads one layer's entry folders (and, with save_index, rewrites its index files); returns
    // the entries and the brief index text.
    std::vector<Entry> read_layer(size_t layer, Kind kind, const std::string& stamp, bool save_index,
                                  std::string* brief_text) const;
    std::vector<fs::path> layers_;
};

// Throws ConfigError when `folder` holds the PATH list separator (':'; ';' on Windows): a
// toolkit there would split PATH in two. `what` names it ("CVM_ROOT", "the folder").
void refuse_list_separator(const std::string& what, const fs::path& folder);

} // namespace cvm
