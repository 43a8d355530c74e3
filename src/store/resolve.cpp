// Which entries of the store a spec selects, and which kind an id names (resolve.h).
#include "store/resolve.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "spec/combination_name.h"
#include "store/entry_trust.h"
#include "spec/spec_match.h"
#include "store/store.h"

namespace cvm {

std::string Resolved::active() const {
    return combination_name(toolkit.id, cudnn ? &cudnn->id : nullptr, nccl ? &nccl->id : nullptr);
}

std::vector<const Entry*> Resolved::entries() const {
    std::vector<const Entry*> out{&toolkit};
    if (cudnn) out.push_back(&*cudnn);
    if (nccl) out.push_back(&*nccl);
    return out;
}

const char* const kEntryIdForms =
    "a toolkit id (12.4.1) or name (import --as), cuDNN id (9.1.0.70-cuda12) or NCCL id (2.21.5-cuda12.4)";

std::optional<Kind> kind_of_id(const Store& store, const std::string& id) {
    if (parse_toolkit_id(id)) return Kind::Cuda;
    if (is_toolkit_name(id) && store.find(Kind::Cuda, id)) return Kind::Cuda; // import --as NAME
    if (parse_nccl_id(id) && store.find(Kind::Nccl, id)) return Kind::Nccl;
    if (parse_cudnn_id(id)) return Kind::Cudnn;
    return std::nullopt;
}

std::vector<const Entry*> Resolved::libraries() const {
    auto out = entries();
    out.erase(out.begin()); // the toolkit
    return out;
}

const Entry* Resolved::of(Kind kind) const {
    if (kind == Kind::Cuda) return &toolkit;
    const auto& e = kind == Kind::Cudnn ? cudnn : nccl;
    return e ? &*e : nullptr;
}

static std::vector<std::string> id_names(const std::vector<std::pair<std::string, size_t>>& ids) {
    std::vector<std::string> out;
    out.reserve(ids.size());
    for (const auto& p : ids) out.push_back(p.first);
    return out;
}

Resolved resolve(const Store& store, const Spec& spec) {
    if (spec.system) throw ResolveError("'system' selects no toolkit");
    return resolve_among(store, spec, id_names(store.ids(Kind::Cuda)),
                         spec.cudnn ? id_names(store.ids(Kind::Cudnn)) : std::vector<std::string>{},
                         spec.nccl ? id_names(store.ids(Kind::Nccl)) : std::vector<std::string>{});
}

Resolved resolve_among(const Store& store, const Spec& spec,
                       const std::vector<std::string>& cuda_ids,
                       const std::vector<std::string>& cudnn_ids,
                       const std::vector<std::string>& nccl_ids) {
    if (spec.system) throw ResolveError("'system' selects no toolkit");
    // What matches is spec_match.h's to say; here the store's entries are read and ranked.
    struct Toolkit {
        std::string id;
        Version v;
        std::optional<Entry> entry; // read already (a name's release is in its entry)
    };
    std::vector<Toolkit> toolkits;
    // The toolkit the spec asks for, in messages: "CUDA 12.4", "the toolkit mine (CUDA 11.8.0)".
    std::string asked = "CUDA " + spec.cuda.str();
    for (const auto& id : cuda_ids) {
        if (!spec.name.empty()) {
            if (!toolkit_matches(spec, id, Version{})) continue;
            if (auto e = store.find(Kind::Cuda, id)) {
                asked = "the toolkit " + id + " (CUDA " + e->version.str() + ")";
                toolkits.push_back({id, e->version, std::move(e)});
            }
        } else if (auto v = parse_toolkit_id(id); v && toolkit_matches(spec, id, *v)) {
            toolkits.push_back({id, *v, std::nullopt});
        }
    }
    if (toolkits.empty() && !spec.name.empty())
        throw ResolveError("no toolkit is named " + spec.name + "; `cvm import DIR --as " + spec.name +
                           "` registers one under that name, or see `cvm list`");
    std::sort(toolkits.begin(), toolkits.end(), [](const Toolkit& a, const Toolkit& b) { return b.v < a.v; });
    if (toolkits.empty()) {
        throw ResolveError("CUDA " + spec.cuda.str() +
                           " is not installed; run `cvm install " + spec.str() +
                           "` or `cvm import DIR`, or see `cvm list`");
    }
    std::vector<std::pair<std::string, CudnnId>> builds;
    for (const auto& id : spec.cudnn ? cudnn_ids : std::vector<std::string>{})
        if (auto c = parse_cudnn_id(id); c && cudnn_matches(spec, *c)) builds.emplace_back(id, *c);
    std::sort(builds.begin(), builds.end(),
              [&spec](const auto& a, const auto& b) { return cudnn_before(spec, a.second, b.second); });
    std::vector<std::string> nccl_names;
    std::vector<NcclId> nccls;
    for (const auto& id : spec.nccl ? nccl_ids : std::vector<std::string>{})
        if (auto n = parse_nccl_id(id); n && nccl_matches(spec, *n)) {
            nccl_names.push_back(id);
            nccls.push_back(*n);
        }
    bool cudnn_fits_one = false;
    for (const auto& tk : toolkits) {
        const std::string* pick = nullptr;
        if (spec.cudnn) {
            for (const auto& b : builds)
                if (cudnn_fits(spec, b.second, tk.v)) {
                    pick = &b.first;
                    break;
                }
            if (!pick) continue;
        }
        cudnn_fits_one = true;
        int nccl = spec.nccl ? pick_nccl(spec, nccls, tk.v) : -1;
        if (spec.nccl && nccl < 0) continue;
        Resolved r;
        auto t = tk.entry ? tk.entry : store.find(Kind::Cuda, tk.id);
        if (!t) continue;
        r.toolkit = std::move(*t);
        if (pick) {
            auto c = store.find(Kind::Cudnn, *pick);
            if (!c) continue;
            r.cudnn = std::move(*c);
        }
        if (nccl >= 0) {
            auto n = store.find(Kind::Nccl, nccl_names[static_cast<size_t>(nccl)]);
            if (!n) continue;
            r.nccl = std::move(*n);
        }
        // What is resolved is about to be run and loaded: its folders must be trusted too.
        for (const Entry* e : r.entries())
            check_entry_trusted(*e);
        return r;
    }
    std::string what;
    if (spec.cudnn && !cudnn_fits_one)
        what = builds.empty() ? "no cuDNN " + spec.cudnn->str() + " is installed"
                              : "no installed cuDNN " + spec.cudnn->str() + " is built for " +
                                    asked + " (have " + builds.front().first + ")";
    else
        what = nccls.empty() ? "no NCCL " + spec.nccl->str() + " is installed"
                             : "no installed NCCL " + spec.nccl->str() + " is built for " + asked +
                                   " (have " + nccl_names.front() + ")";
    throw ResolveError(what + "; run `cvm install " + spec.str() + "`");
}

} // namespace cvm
