#pragma once
// Resolution: the entries of a store a spec selects (the newest toolkit that matches, with the
// newest matching cuDNN and NCCL builds for it), and the kind of entry an id names. What matches
// a spec is spec_match.h's to say; here the store's entries are read and ranked.
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "store/entry.h"
#include "spec/spec.h"

namespace cvm {

class Store; // store.h

// The kind of entry `id` names: a toolkit id (12.4.1); an NCCL id where `store` holds an NCCL of
// that id (2.21.5-cuda12.4 reads as a cuDNN id too); else a cuDNN id (9.1.0.70-cuda12). None
// for anything else: the message then names kEntryIdForms.
std::optional<Kind> kind_of_id(const Store& store, const std::string& id);
extern const char* const kEntryIdForms; // "a toolkit id (12.4.1), cuDNN id (...) or NCCL id (...)"

// The combination a spec resolves to in a store.
struct Resolved {
    Entry toolkit;
    std::optional<Entry> cudnn;
    std::optional<Entry> nccl;
    std::string active() const; // "11.2.2+8.1.0.77-cuda11.2", "12.4.1+nccl2.21.5-cuda12.4"
    // Every entry of the combination, in all_kinds() order.
    std::vector<const Entry*> entries() const;
    // The entries beside the toolkit (cuDNN, then NCCL): what a merged view adds to it.
    std::vector<const Entry*> libraries() const;
    // The entry of `kind`, or null.
    const Entry* of(Kind kind) const;
};

// Thrown when a spec names nothing installed; the message says what to run.
class ResolveError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Newest toolkit matching spec.cuda (for which, when the spec asks for cuDNN, a matching build
// exists), and the newest matching cuDNN build for it. Reads only the entries it picks.
Resolved resolve(const Store& store, const Spec& spec);
// The same, choosing among the given ids (for callers that have listed the store already).
Resolved resolve_among(const Store& store, const Spec& spec,
                       const std::vector<std::string>& cuda_ids,
                       const std::vector<std::string>& cudnn_ids,
                       const std::vector<std::string>& nccl_ids = {});

} // namespace cvm
