#pragma once
// The prompt hook's undo record (`cvm hook-env`): what entering a folder applied, so that leaving
// it takes back exactly that and keeps what the user changed meanwhile (as direnv and mise do).
// Pure: values in, variable edits out.
//
// The record lives in the exported variable _CVM_HOOK (child shells inherit it with the
// environment it describes). Its size is bounded by the selection's folders and the entries the
// activation removed from PATH-like lists: each new activation starts from the undone state.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "activation/environment.h"
#include "shells/shell.h"

namespace cvm {

// One variable the hook changed.
struct HookVar {
    std::string name;
    bool list = false; // PATH-like (PATH, LD_LIBRARY_PATH): entries, not the whole value
    // Scalars: the value before (nullopt: unset) and the value the hook set.
    std::optional<std::string> old_value;
    std::optional<std::string> new_value;
    // Lists: the entries the hook put in, the entries it took out with the entry that preceded
    // each one ("" for the first), and whether the variable was unset before.
    std::vector<std::string> added;
    std::vector<std::pair<std::string, std::string>> removed;
    bool was_unset = false;
    // Lists: the whole value before (when set) and the one the hook set. While the variable still
    // holds what the hook set, undoing gives back the old text byte for byte (`:/usr/bin::/bin:`
    // keeps its empty entries); once the user changed it, the entries above are undone instead.
    std::optional<std::string> old_text, new_text;
};

struct HookState {
    std::string active; // the CVM_ACTIVE text of what is applied
    std::vector<HookVar> vars;
};

// The variable's text, and back; nullopt for text that is not a record (a hand-edited variable).
std::string encode_hook_state(const HookState& state);
std::optional<HookState> decode_hook_state(std::string_view text);

// The edits that take back `state` from the environment `current`: added list entries are
// removed and removed ones put back after the entry that preceded them; a scalar gets its old
// value back unless it no longer holds what the hook set (the user changed it: it stays).
std::vector<EnvChange> undo_hook(const HookState& state, const EnvLookup& current, platform::Os os);

// The record of applying `changes` (compute_environment's list) to the environment `before`.
HookState record_hook(const std::string& active, const std::vector<EnvChange>& changes,
                      const EnvLookup& before, platform::Os os);

} // namespace cvm
