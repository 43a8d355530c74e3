// The values completion offers: what the store holds (ids, the versions users type for them,
// shims), what the registry knows (releases), shells. Nothing here may fail loudly: a broken
// store or registry gives fewer candidates.
#include <algorithm>
#include <cctype>
#include <map>

#include "cli/completion.h"
#include "cli/context.h"
#include "spec/spec.h"
#include "platform/platform.h"
#include "registry/nccl.h"
#include "registry/overlay.h"
#include "registry/registry.h"

namespace cvm::cli {

namespace {

struct Installed {
    std::string id;
    Version version;
    Version cuda; // cuDNN: the CUDA it was built for
    bool imported = false;
    std::string path;
};

struct Installs {
    std::vector<Installed> toolkits, cudnns, nccls; // newest first
};

Installs installed() {
    Installs out;
    try {
        Store store = open_store();
        for (Kind kind : all_kinds()) {
            Listing listing = store.brief(kind);
            for (const ListItem& item : listing.items) {
                Installed i;
                i.id = std::string(item.id);
                i.version.parts.assign(item.version, item.version + item.version_parts);
                i.cuda.parts.assign(item.cuda, item.cuda + item.cuda_parts);
                i.imported = item.imported;
                i.path = std::string(item.path);
                (kind == Kind::Cuda    ? out.toolkits
                 : kind == Kind::Cudnn ? out.cudnns
                                       : out.nccls)
                    .push_back(std::move(i));
            }
        }
    } catch (const std::exception&) {
        // No store, or one that cannot be read: nothing installed to offer.
    }
    return out;
}

std::string toolkit_text(const Installed& t) {
    return "CUDA " + t.id + (t.imported ? " (imported from " + t.path + ")" : "");
}

bool serves(const Installed& cudnn, const Version& toolkit) { return CudnnId{cudnn.version, cudnn.cuda}.serves(toolkit); }

// The versions users type for what is installed: `12`, `12.4`, `12.4.1`, `12.4+9`, and the
// exact `12.4.1+9.1.0.70-cuda12`; each described by what it selects now (the newest match).
void add_specs(Completion& out, const std::string& prefix) {
    Installs in = installed();
    add_candidate(out, "system", "no override: the CUDA the machine has", prefix);
    for (const Installed& t : in.toolkits) {
        std::vector<std::string> forms;
        for (size_t n = 1; n <= t.version.parts.size(); ++n)
            forms.push_back(Version{{t.version.parts.begin(), t.version.parts.begin() + n}}.str());
        for (const auto& form : forms) add_candidate(out, form, toolkit_text(t), prefix);
    }
    // With cuDNN: `X.Y+MAJOR` picks the newest toolkit of X.Y that a cuDNN of MAJOR serves.
    std::map<std::string, std::string> combos;
    for (const Installed& t : in.toolkits) {
        if (t.version.parts.size() < 2) continue;
        std::string minor = Version{{t.version.parts[0], t.version.parts[1]}}.str();
        for (const Installed& c : in.cudnns) {
            if (!serves(c, t.version)) continue;
            std::string text = "CUDA " + t.id + " + cuDNN " + c.id;
            combos.emplace(minor + "+" + std::to_string(c.version.major()), text);
            combos.emplace(t.id + "+" + c.id, text);
        }
        // With NCCL: `X.Y+ncclA.B`, an NCCL serving the toolkit's CUDA major.
        for (const Installed& n : in.nccls) {
            if (!NcclId{n.version, n.cuda}.serves(t.version) || n.version.parts.size() < 2)
                continue;
            std::string text = "CUDA " + t.id + " + NCCL " + n.id;
            combos.emplace(
                minor + "+nccl" + Version{{n.version.parts[0], n.version.parts[1]}}.str(), text);
            combos.emplace(t.id + "+nccl" + n.id, text);
        }
    }
    for (const auto& [value, text] : combos) add_candidate(out, value, text, prefix);
}

void add_ids(Completion& out, const std::string& prefix) {
    Installs in = installed();
    for (const Installed& t : in.toolkits) add_candidate(out, t.id, toolkit_text(t), prefix);
    for (const Installed& c : in.cudnns)
        add_candidate(out, c.id, "cuDNN " + c.version.str() + " for CUDA " + c.cuda.str() + (c.imported ? " (imported)" : ""),
            prefix);
    for (const Installed& n : in.nccls)
        add_candidate(out, n.id,
            "NCCL " + n.version.str() + " for CUDA " + n.cuda.str() +
                (n.imported ? " (imported)" : ""),
            prefix);
}

void add_tools(Completion& out, const std::string& prefix) {
    try {
        Store store = open_store();
        std::vector<std::string> names = platform::folder_names(store.shims_dir().u8string());
        std::sort(names.begin(), names.end());
        const std::string suffix = platform::exe_suffix();
        for (std::string n : names) {
            if (n.empty() || n[0] == '.') continue;
            if (!suffix.empty() && n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
                n.resize(n.size() - suffix.size());
            add_candidate(out, n, "", prefix);
        }
    } catch (const std::exception&) {
    }
}

std::optional<registry::Registry> registry_for_completion() {
    try {
        // With the `cvm update` overlay; a bad one is left out silently here (completion prints nothing of its own).
        return registry::load_registry_with_overlay(open_store().cache_dir());
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

void add_cuda_releases(Completion& out, const std::string& prefix) {
    auto reg = registry_for_completion();
    if (!reg) return;
    for (auto it = reg->cuda.rbegin(); it != reg->cuda.rend(); ++it) {
        if (it->manifest.empty()) continue; // not installable from NVIDIA's manifests
        add_candidate(out, it->version.str(), "CUDA " + it->version.str() + (it->date.empty() ? "" : " (" + it->date + ")"),
            prefix);
    }
}

void add_cudnn_releases(Completion& out, const std::string& prefix) {
    auto reg = registry_for_completion();
    if (!reg) return;
    for (auto it = reg->cudnn.rbegin(); it != reg->cudnn.rend(); ++it) {
        std::string cudas;
        for (const auto& b : it->builds) cudas += (cudas.empty() ? "" : ", ") + b.cuda.str();
        add_candidate(out, it->version.str(), "cuDNN " + it->version.str() + (cudas.empty() ? "" : " for CUDA " + cudas), prefix);
    }
}

void add_nccl_releases(Completion& out, const std::string& prefix) {
    try {
        auto releases = registry::load_nccl_releases();
        for (auto it = releases.rbegin(); it != releases.rend(); ++it) {
            std::string cudas;
            for (const auto& b : it->builds)
                cudas += (cudas.empty() ? "" : ", ") + b.cuda.str();
            add_candidate(out, it->version.str(), "NCCL " + it->version.str() + " for CUDA " + cudas, prefix);
        }
    } catch (const std::exception&) {
    }
}

void add_cuda_versions(Completion& out, const std::string& prefix) {
    auto reg = registry_for_completion();
    if (!reg) return;
    for (auto it = reg->cuda.rbegin(); it != reg->cuda.rend(); ++it) {
        add_candidate(out, std::to_string(it->version.major()), "CUDA " + std::to_string(it->version.major()), prefix);
        add_candidate(out, Version{{it->version.major(), it->version.minor()}}.str(), "", prefix);
    }
}

void add_frameworks(Completion& out, const std::string& prefix) {
    add_candidate(out, ".", "the frameworks of the active Python, else the project's pins", prefix);
    auto reg = registry_for_completion();
    if (!reg) return;
    for (auto it = reg->frameworks.rbegin(); it != reg->frameworks.rend(); ++it) {
        std::string name = it->name == "pytorch" ? "torch" : it->name;
        std::string cudas;
        for (const auto& b : it->builds) cudas += (cudas.empty() ? "" : ", ") + b.cuda.str();
        add_candidate(out, name + "==" + it->version.str(), "CUDA " + cudas, prefix);
    }
}

void add_shells(Completion& out, const std::string& described, const std::string& prefix) {
    const std::vector<std::string> all{"bash", "zsh", "fish", "pwsh", "powershell", "cmd"};
    auto named = [&described](const std::string& s) {
        for (size_t at = described.find(s); at != std::string::npos; at = described.find(s, at + 1)) {
            bool start = at == 0 || !std::isalpha(static_cast<unsigned char>(described[at - 1]));
            size_t end = at + s.size();
            bool stop = end == described.size() || !std::isalpha(static_cast<unsigned char>(described[end]));
            if (start && stop) return true;
        }
        return false;
    };
    bool any = std::any_of(all.begin(), all.end(), named);
    for (const auto& s : all)
        if (any ? named(s) : s != "powershell") add_candidate(out, s, "", prefix);
}

} // namespace

Completion dynamic_values(ValueKind kind, const std::vector<std::string>& given, const std::string& prefix) {
    Completion out;
    switch (kind) {
    case ValueKind::Spec:
        add_specs(out, prefix);
        break;
    case ValueKind::Id:
        add_ids(out, prefix);
        break;
    case ValueKind::Tool:
        add_tools(out, prefix);
        break;
    case ValueKind::Program:
        out.directive = "commands";
        break;
    case ValueKind::Dir:
        out.directive = "dirs";
        break;
    case ValueKind::File:
        out.directive = "files";
        break;
    case ValueKind::InstallWhat:
        if (given.empty()) {
            add_candidate(out, "cuda", "a toolkit from NVIDIA's manifests: cvm install cuda VERSION", prefix);
            add_candidate(out, "cudnn", "a cuDNN build: cvm install cudnn VERSION --cuda N", prefix);
            add_candidate(out, "nccl", "an NCCL build: cvm install nccl VERSION --cuda N", prefix);
            add_cuda_releases(out, prefix);
            out.directive = "files";
        } else if (given.size() == 1 && given[0] == "cuda") {
            add_cuda_releases(out, prefix);
        } else if (given.size() == 1 && given[0] == "cudnn") {
            add_cudnn_releases(out, prefix);
        } else if (given.size() == 1 && given[0] == "nccl") {
            add_nccl_releases(out, prefix);
        }
        break;
    case ValueKind::CudaVersion:
        add_cuda_versions(out, prefix);
        break;
    case ValueKind::Framework:
        add_frameworks(out, prefix);
        break;
    case ValueKind::Shell:
    case ValueKind::Choices:
    case ValueKind::CommandName:
    case ValueKind::None:
        break;
    }
    return out;
}

Completion shell_values(const std::string& description, const std::string& prefix) {
    Completion out;
    add_shells(out, description, prefix);
    return out;
}

} // namespace cvm::cli
