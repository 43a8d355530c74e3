#include "store/entry.h"

namespace cvm {

const char* kind_dir(Kind k) {
    return k == Kind::Cuda ? "cuda" : k == Kind::Cudnn ? "cudnn" : "nccl";
}

const char* kind_label(Kind k) {
    return k == Kind::Cuda ? "CUDA" : k == Kind::Cudnn ? "cuDNN" : "NCCL";
}

std::optional<Kind> kind_of_dir(std::string_view word) {
    for (Kind k : all_kinds())
        if (word == kind_dir(k)) return k;
    return std::nullopt;
}

const std::vector<Kind>& all_kinds() {
    static const std::vector<Kind> kinds{Kind::Cuda, Kind::Cudnn, Kind::Nccl};
    return kinds;
}

std::optional<EntryIdParts> parse_entry_id(Kind kind, std::string_view id) {
    if (kind == Kind::Cuda) {
        if (auto v = parse_toolkit_id(id)) return EntryIdParts{*v, Version{}};
    } else if (kind == Kind::Cudnn) {
        if (auto c = parse_cudnn_id(id)) return EntryIdParts{c->version, c->cuda};
    } else if (auto n = parse_nccl_id(id)) {
        return EntryIdParts{n->version, n->cuda};
    }
    return std::nullopt;
}

std::optional<CudnnId> Entry::cudnn_id() const {
    if (kind != Kind::Cudnn) return std::nullopt;
    return CudnnId{version, cuda};
}

std::optional<NcclId> Entry::nccl_id() const {
    if (kind != Kind::Nccl) return std::nullopt;
    return NcclId{version, cuda};
}

} // namespace cvm
