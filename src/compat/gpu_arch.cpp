#include "compat/gpu_arch.h"

#include <algorithm>
#include <toml++/toml.h>

#include "config/program_trust.h"
#include "text/toml_input.h"
#include "doctor/driver.h"
#include "platform/platform.h"
#include "registry/registry.h"

namespace cvm::registry {
extern const unsigned char embedded_gpu_archs_toml[];
extern const std::size_t embedded_gpu_archs_toml_size;
} // namespace cvm::registry

namespace cvm::compat {

namespace fs = std::filesystem;
using registry::RegistryError;

std::vector<GpuArchRow> parse_gpu_arch_table(std::string_view text, const std::string& origin) {
    toml::table root = parse_toml<RegistryError>(text, origin, "");
    auto where = [&](const toml::node& n) { return origin + ":" + std::to_string(n.source().begin.line) + ": "; };
    std::vector<GpuArchRow> rows;
    const toml::array* list = root["toolkit"].as_array();
    if (!list) throw RegistryError(origin + ": no [[toolkit]] rows");
    for (const auto& item : *list) {
        const toml::table* t = item.as_table();
        if (!t) throw RegistryError(where(item) + "toolkit: must be a [[toolkit]] table");
        GpuArchRow row;
        for (const auto& [key, node] : *t) {
            std::string k(key.str());
            if (k == "cuda") {
                auto v = node.value<std::string>();
                auto parsed = v ? parse_version(*v, 2, 2) : std::nullopt;
                if (!parsed) throw RegistryError(where(node) + "cuda: must be \"MAJOR.MINOR\"");
                row.cuda = *parsed;
            } else if (k == "compute" || k == "inferred") {
                const toml::array* a = node.as_array();
                if (!a) throw RegistryError(where(node) + k + ": must be a list");
                for (const auto& e : *a) {
                    if (k == "compute") {
                        auto n = e.value<int64_t>();
                        if (!n || *n < 10 || *n > 999) throw RegistryError(where(e) + "compute: must hold numbers like 86");
                        row.compute.push_back(static_cast<unsigned>(*n));
                    } else {
                        auto s = e.value<std::string>();
                        if (!s) throw RegistryError(where(e) + "inferred: must hold key names");
                        row.inferred.push_back(*s);
                    }
                }
            } else if (k == "source") {
                row.source = node.value_or(std::string());
            } else {
                throw RegistryError(where(node) + k + ": unknown key");
            }
        }
        if (row.cuda.empty() || row.compute.empty() || row.source.empty())
            throw RegistryError(where(item) + "a [[toolkit]] row needs cuda, compute and source");
        if (!std::is_sorted(row.compute.begin(), row.compute.end()))
            throw RegistryError(where(item) + "compute: must be lowest first");
        rows.push_back(std::move(row));
    }
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.cuda < b.cuda; });
    return rows;
}

std::vector<GpuArchRow> load_gpu_arch_table() {
    auto [text, origin] = registry::registry_table_text(
        "gpu_archs.toml", {reinterpret_cast<const char*>(registry::embedded_gpu_archs_toml),
                           registry::embedded_gpu_archs_toml_size});
    return parse_gpu_arch_table(text, origin);
}

const GpuArchRow* arch_row(const std::vector<GpuArchRow>& table, const Version& cuda) {
    for (const auto& r : table)
        if (r.cuda.major() == cuda.major() && r.cuda.minor() == cuda.minor()) return &r;
    return nullptr;
}

std::vector<Gpu> gpus_from_smi_compute_cap(std::string_view text) {
    std::vector<Gpu> out;
    for (const auto& [name, cap] : doctor::smi_name_value_rows(text)) {
        auto v = parse_version(cap, 2, 2);
        if (!v || v->major() == 0 || v->major() > 99 || v->minor() > 9) continue;
        out.push_back({std::string(name), v->major() * 10 + v->minor()});
    }
    return out;
}

std::vector<Gpu> detect_gpus() {
    std::string smi;
    if (auto v = platform::get_env("CVM_NVIDIA_SMI")) smi = *v;
    else
        smi =
            find_trusted_program("nvidia-smi", platform::get_env("PATH").value_or("")).u8string();
    if (smi.empty() || !platform::is_executable(fs::u8path(smi))) return {};
    auto out = platform::capture_output(fs::u8path(smi), {smi, "--query-gpu=name,compute_cap", "--format=csv,noheader"}, 10000);
    return out ? gpus_from_smi_compute_cap(*out) : std::vector<Gpu>{};
}

std::string cc_text(unsigned cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

std::string describe_gpu(const Gpu& gpu) {
    return "sm_" + std::to_string(gpu.cc) + " (" + gpu.name + ", compute capability " + cc_text(gpu.cc) + ")";
}

ArchJudgement judge_arch(const GpuArchRow& row, const Gpu& gpu, const std::vector<GpuArchRow>& table) {
    ArchJudgement j;
    if (std::find(row.compute.begin(), row.compute.end(), gpu.cc) != row.compute.end()) return j;
    const std::string cuda = "CUDA " + row.cuda.str();
    const std::string who = describe_gpu(gpu);
    // The toolkits that build for it natively, oldest and newest, for the advice.
    std::vector<const GpuArchRow*> native;
    for (const auto& r : table)
        if (std::find(r.compute.begin(), r.compute.end(), gpu.cc) != r.compute.end()) native.push_back(&r);
    std::string advice = native.empty() ? std::string()
                                        : "; CUDA " + native.front()->cuda.str() + " to " + native.back()->cuda.str() +
                                              " build for it";
    unsigned newest_below = 0;
    for (unsigned c : row.compute)
        if (c <= gpu.cc) newest_below = c;
    if (newest_below) {
        j.support = ArchSupport::PtxJit;
        j.message = cuda + " cannot build for " + who + "; its newest PTX, compute_" + std::to_string(newest_below) +
                    ", will be JIT-compiled when a program starts (slow first start)" + advice;
    } else {
        j.support = ArchSupport::None;
        j.message = cuda + " cannot build for " + who + ": it starts at compute_" + std::to_string(row.compute.front()) +
                    ", so its programs cannot run on this GPU" + advice;
    }
    return j;
}

} // namespace cvm::compat
