#include "compat/torch_arch.h"

#include <nlohmann/json.hpp>

#include "binary/nccl_version.h"
#include "doctor/python_env.h"
#include "platform/platform.h"

#include <map>

namespace cvm::compat {

namespace {

// The program: one JSON list on the last line of stdout (import messages go before it).
const char* const kArchProgram = "import json, torch\n"
                                 "a = []\n"
                                 "try:\n"
                                 "    a = list(torch.cuda.get_arch_list())\n"
                                 "except Exception:\n"
                                 "    pass\n"
                                 "if not a:\n"
                                 "    try:\n"
                                 "        a = (torch._C._cuda_getArchFlags() or '').split()\n"
                                 "    except Exception:\n"
                                 "        pass\n"
                                 "n = None\n"
                                 "try:\n"
                                 "    n = torch.cuda.nccl.version()\n"
                                 "    n = list(n) if isinstance(n, tuple) else int(n)\n"
                                 "except Exception:\n"
                                 "    n = None\n"
                                 "print(json.dumps({'nccl': n}))\n"
                                 "print(json.dumps([str(x) for x in a]))\n";

// What each interpreter said in this process (torch is imported once per `cvm doctor`).
std::map<std::string, std::optional<TorchFacts>>& facts_cache() {
    static std::map<std::string, std::optional<TorchFacts>> cache;
    return cache;
}

struct Arch {
    bool ptx = false;
    unsigned cc = 0;
    bool specific = false; // sm_90a, sm_100f: one architecture or family only
};

std::optional<Arch> parse_arch(const std::string& s) {
    Arch a;
    std::string_view rest;
    if (s.rfind("sm_", 0) == 0) {
        rest = std::string_view(s).substr(3);
    } else if (s.rfind("compute_", 0) == 0) {
        a.ptx = true;
        rest = std::string_view(s).substr(8);
    } else {
        return std::nullopt;
    }
    size_t digits = 0;
    while (digits < rest.size() && digits < 4 && rest[digits] >= '0' && rest[digits] <= '9')
        ++digits;
    if (digits < 2) return std::nullopt;
    a.cc = static_cast<unsigned>(std::stoul(std::string(rest.substr(0, digits))));
    a.specific = digits < rest.size();
    return a;
}

} // namespace

std::optional<std::vector<std::string>> parse_torch_arch_output(std::string_view text) {
    // The last non-empty line.
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
        text.remove_suffix(1);
    auto nl = text.rfind('\n');
    std::string_view line = nl == std::string_view::npos ? text : text.substr(nl + 1);
    nlohmann::json doc = nlohmann::json::parse(line, nullptr, false);
    if (doc.is_discarded() || !doc.is_array()) return std::nullopt;
    std::vector<std::string> out;
    for (const auto& e : doc)
        if (e.is_string()) out.push_back(e.get<std::string>());
    return out;
}

std::optional<std::string> parse_torch_nccl_output(std::string_view text) {
    for (size_t start = 0; start < text.size();) {
        size_t nl = text.find('\n', start);
        std::string_view line =
            text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
        start = nl == std::string_view::npos ? text.size() : nl + 1;
        if (line.rfind("{\"nccl\"", 0) != 0) continue;
        nlohmann::json doc = nlohmann::json::parse(line, nullptr, false);
        if (doc.is_discarded() || !doc.is_object()) return std::nullopt;
        const auto& n = doc["nccl"];
        if (n.is_array() && n.size() == 3 && n[0].is_number_unsigned() &&
            n[1].is_number_unsigned() && n[2].is_number_unsigned())
            return std::to_string(n[0].get<unsigned>()) + "." +
                   std::to_string(n[1].get<unsigned>()) + "." +
                   std::to_string(n[2].get<unsigned>());
        if (n.is_number_integer())
            if (auto v = binary::decode_nccl_version_code(n.get<long long>()))
                return std::to_string((*v)[0]) + "." + std::to_string((*v)[1]) + "." +
                       std::to_string((*v)[2]);
        return std::nullopt;
    }
    return std::nullopt;
}

std::optional<std::vector<std::string>> torch_arch_list(const std::string& python) {
    if (python.empty()) return std::nullopt;
    auto& cache = facts_cache();
    if (auto it = cache.find(python); it != cache.end())
        return it->second ? std::optional(it->second->archs) : std::nullopt;
    auto out = platform::capture_python(
        python, std::string(doctor::kUserSitePrelude) + kArchProgram, 60000);
    std::optional<TorchFacts> facts;
    if (out)
        if (auto archs = parse_torch_arch_output(*out))
            facts = TorchFacts{*archs, parse_torch_nccl_output(*out)};
    cache[python] = facts;
    return facts ? std::optional(facts->archs) : std::nullopt;
}

std::optional<TorchFacts> torch_facts_if_run(const std::string& python) {
    auto& cache = facts_cache();
    auto it = cache.find(python);
    return it == cache.end() ? std::nullopt : it->second;
}

TorchArchJudgement judge_torch_arch(const std::vector<std::string>& arch_list, const Gpu& gpu,
                                    const std::string& torch) {
    TorchArchJudgement j;
    unsigned ptx = 0;
    std::string cubins;
    for (const auto& s : arch_list) {
        auto a = parse_arch(s);
        if (!a) continue;
        if (a->ptx) {
            if (a->cc <= gpu.cc && a->cc > ptx) ptx = a->cc;
            continue;
        }
        cubins += (cubins.empty() ? "" : " ") + s;
        if (a->specific ? a->cc == gpu.cc : (a->cc / 10 == gpu.cc / 10 && a->cc <= gpu.cc))
            return j;
    }
    const std::string built = cubins.empty() ? "no GPU code" : "kernels for " + cubins;
    if (ptx) {
        j.support = TorchArchSupport::PtxJit;
        j.message = torch + " has no kernels for " + describe_gpu(gpu) + " (it has " + built +
                    "); its PTX, compute_" + std::to_string(ptx) +
                    ", will be JIT-compiled when it starts (slow first start)";
    } else {
        j.support = TorchArchSupport::None;
        j.message = torch + " cannot run on " + describe_gpu(gpu) + ": it has " + built +
                    " and no PTX it could JIT-compile (torch.cuda.get_arch_list())";
    }
    return j;
}

} // namespace cvm::compat
