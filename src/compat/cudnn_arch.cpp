#include "compat/cudnn_arch.h"

#include <algorithm>
#include <toml++/toml.h>

#include "text/toml_input.h"
#include "registry/registry.h"

namespace cvm::registry {
extern const unsigned char embedded_cudnn_archs_toml[];
extern const std::size_t embedded_cudnn_archs_toml_size;
} // namespace cvm::registry

namespace cvm::compat {

using registry::RegistryError;

namespace {

std::vector<unsigned> number_list(const toml::node& node, const std::string& where, const char* key,
                                  int64_t low, int64_t high) {
    const toml::array* a = node.as_array();
    if (!a) throw RegistryError(where + key + ": must be a list");
    std::vector<unsigned> out;
    for (const auto& e : *a) {
        // CUDA majors are written as strings ("11"), compute capabilities as numbers.
        std::optional<int64_t> n = e.value<int64_t>();
        if (!n)
            if (auto s = e.value<std::string>())
                if (auto v = parse_version(*s, 1, 1)) n = v->major();
        if (!n || *n < low || *n > high)
            throw RegistryError(where + key + ": must hold numbers from " + std::to_string(low) + " to " +
                                std::to_string(high));
        out.push_back(static_cast<unsigned>(*n));
    }
    return out;
}

} // namespace

std::vector<CudnnArchRow> parse_cudnn_arch_table(std::string_view text, const std::string& origin) {
    toml::table root = parse_toml<RegistryError>(text, origin, "");
    auto where = [&](const toml::node& n) { return origin + ":" + std::to_string(n.source().begin.line) + ": "; };
    const toml::array* list = root["build"].as_array();
    if (!list) throw RegistryError(origin + ": no [[build]] rows");
    std::vector<CudnnArchRow> rows;
    for (const auto& item : *list) {
        const toml::table* t = item.as_table();
        if (!t) throw RegistryError(where(item) + "build: must be a [[build]] table");
        CudnnArchRow row;
        for (const auto& [key, node] : *t) {
            std::string k(key.str());
            if (k == "cudnn") {
                const toml::array* a = node.as_array();
                std::optional<Version> first, last;
                if (a && a->size() == 2) {
                    if (auto s = (*a)[0].value<std::string>()) first = parse_version(*s, 2, 2);
                    if (auto s = (*a)[1].value<std::string>()) last = parse_version(*s, 2, 2);
                }
                if (!first || !last || *last < *first)
                    throw RegistryError(where(node) + "cudnn: must be [\"FIRST\", \"LAST\"] major.minor, in order");
                row.first = *first;
                row.last = *last;
            } else if (k == "cuda") {
                row.cuda = number_list(node, where(node), "cuda", 7, 99);
            } else if (k == "compute") {
                row.compute = number_list(node, where(node), "compute", 10, 999);
            } else if (k == "forward_compatible") {
                auto b = node.value<bool>();
                if (!b) throw RegistryError(where(node) + "forward_compatible: must be true or false");
                row.forward_compatible = *b;
            } else if (k == "source") {
                row.source = node.value_or(std::string());
            } else if (k == "inferred") {
                const toml::array* a = node.as_array();
                if (!a) throw RegistryError(where(node) + "inferred: must be a list");
                for (const auto& e : *a) {
                    auto s = e.value<std::string>();
                    if (!s) throw RegistryError(where(e) + "inferred: must hold text");
                    row.inferred.push_back(*s);
                }
            } else {
                throw RegistryError(where(node) + k + ": unknown key");
            }
        }
        if (row.first.empty() || row.cuda.empty() || row.compute.empty() || row.source.empty())
            throw RegistryError(where(item) + "a [[build]] row needs cudnn, cuda, compute and source");
        if (!std::is_sorted(row.compute.begin(), row.compute.end()))
            throw RegistryError(where(item) + "compute: must be lowest first");
        // Two rows for one build would make the answer depend on their order.
        for (const auto& other : rows)
            for (unsigned c : row.cuda)
                if (std::count(other.cuda.begin(), other.cuda.end(), c) && !(row.last < other.first) &&
                    !(other.last < row.first))
                    throw RegistryError(where(item) + "overlaps the row of cuDNN " + other.first.str() + " to " +
                                        other.last.str() + " for CUDA " + std::to_string(c));
        rows.push_back(std::move(row));
    }
    return rows;
}

std::vector<CudnnArchRow> load_cudnn_arch_table() {
    auto [text, origin] = registry::registry_table_text(
        "cudnn_archs.toml", {reinterpret_cast<const char*>(registry::embedded_cudnn_archs_toml),
                             registry::embedded_cudnn_archs_toml_size});
    return parse_cudnn_arch_table(text, origin);
}

const CudnnArchRow* cudnn_arch_row(const std::vector<CudnnArchRow>& table, const Version& cudnn,
                                   const Version& cuda) {
    if (cudnn.parts.size() < 2 || cuda.empty()) return nullptr;
    Version release{{cudnn.major(), cudnn.minor()}};
    for (const auto& r : table)
        if (!(release < r.first) && !(r.last < release) &&
            std::count(r.cuda.begin(), r.cuda.end(), cuda.major()))
            return &r;
    return nullptr;
}

bool cudnn_row_serves(const CudnnArchRow& row, unsigned cc) {
    return std::any_of(row.compute.begin(), row.compute.end(),
                       [&](unsigned c) { return c / 10 == cc / 10 && c <= cc; });
}

CudnnArchJudgement judge_cudnn_arch(const CudnnArchRow& row, const Version& cudnn, const Gpu& gpu,
                                    const std::vector<CudnnArchRow>& table) {
    CudnnArchJudgement j;
    if (cudnn_row_serves(row, gpu.cc)) return j;
    const std::string release = Version{{cudnn.major(), cudnn.minor(), cudnn.parts.size() > 2 ? cudnn.parts[2] : 0}}.str();
    // The releases whose builds (for any CUDA) support it, for the advice.
    std::optional<Version> first, last;
    for (const auto& r : table)
        if (cudnn_row_serves(r, gpu.cc)) {
            if (!first || r.first < *first) first = r.first;
            if (!last || *last < r.last) last = r.last;
        }
    std::string advice;
    if (first) advice = "; cuDNN " + first->str() + " to " + last->str() + " support it";
    const std::string range = cc_text(row.compute.front()) + " to " + cc_text(row.compute.back());
    if (gpu.cc > row.compute.back() && row.forward_compatible) {
        j.support = CudnnArchSupport::ForwardOnly;
        j.message = "cuDNN " + release + " has no kernels built for " + describe_gpu(gpu) +
                    " (it supports compute capability " + range +
                    "): only its hardware-forward-compatible operation graphs run there, others fail with "
                    "CUDNN_STATUS_NOT_SUPPORTED" + advice;
    } else {
        j.support = CudnnArchSupport::None;
        j.message = "cuDNN " + release + " does not support " + describe_gpu(gpu) + ": its build supports compute capability " +
                    range + advice;
    }
    return j;
}

} // namespace cvm::compat
