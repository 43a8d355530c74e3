#include "cli/available.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <set>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/release_registry.h"
#include "text/terminal_text.h"
#include "platform/platform.h"

namespace cvm::cli {

namespace {

bool is_kind(const std::string& s) {
    return kind_of_dir(s).has_value();
}

// NCCL's releases (registry/nccl.toml); none when it cannot be read (said once on stderr).
const std::vector<registry::NcclRelease>& nccl_releases() {
    static const std::vector<registry::NcclRelease> releases = [] {
        try {
            return registry::load_nccl_releases();
        } catch (const registry::RegistryError& e) {
            note(std::string("no NCCL release list: ") + e.what());
            return std::vector<registry::NcclRelease>{};
        }
    }();
    return releases;
}

registry::Platform host_platform() {
    return platform::host_os() == platform::Os::Windows ? registry::Platform::Windows
                                                        : registry::Platform::Linux;
}

std::set<std::string> installed_ids(const Store& store, Kind kind) {
    std::set<std::string> out;
    for (const auto& [id, layer] : store.ids(kind)) {
        (void)layer;
        out.insert(id);
    }
    return out;
}

// Whether a cuDNN build supports some CUDA that starts with `cuda` ("11", "11.2", "11.2.2").
bool supports_prefix(const registry::CudnnBuild& b, const Version& cuda) {
    if (cuda.parts.size() >= 2) return registry::cudnn_build_supports(b, cuda);
    return b.supports_min.major() <= cuda.major() && cuda.major() <= b.supports_max.major();
}

std::string min_driver_text(const registry::Registry& reg, const KnownRelease& r) {
    if (r.kind != Kind::Cuda) return {};
    auto d = registry::minimum_driver(reg, r.version, host_platform(), registry::DriverRule::Toolkit);
    return d ? d->driver.text : std::string();
}

} // namespace

void add_release_filter(CLI::App* cmd, const std::shared_ptr<ReleaseFilter>& filter) {
    // KIND takes a PREFIX too, so that `cvm list --available 11` needs no KIND.
    CLI::Validator kind_or_prefix(
        [](std::string& value) -> std::string {
            if (is_kind(value) || parse_version(value, 1, 4)) return {};
            return value + " is not cuda, cudnn or nccl";
        },
        "{cuda,cudnn,nccl}",
        "kind"); // the description in CLI11's choice form, for completion (cli_model.cpp)
    cmd->add_option("kind", filter->kind, "cuda, cudnn or nccl")->check(kind_or_prefix);
    cmd->add_option("prefix", filter->prefix, "a version prefix, e.g. 12 or 11.2");
}

std::optional<Version> release_prefix(ReleaseFilter& filter, const std::string& command) {
    if (!filter.kind.empty() && !is_kind(filter.kind)) {
        if (!filter.prefix.empty())
            throw UsageError(command + ": '" + printable(filter.kind) +
                                 "' is not a valid KIND (cuda, cudnn or nccl); see cvm help " +
                                 command,
                             "usage");
        filter.prefix = filter.kind;
        filter.kind.clear();
    }
    if (filter.prefix.empty()) return std::nullopt;
    auto v = parse_version(filter.prefix, 1, 4);
    if (!v)
        throw UsageError(command + ": '" + printable(filter.prefix) +
                             "' is not a valid PREFIX (a version like 12 or 11.2); see cvm help " + command,
                         "usage");
    return v;
}

registry::Registry load_registry_or_fail(registry::OverlayState* overlay) {
    try {
        return release_registry(open_store(), overlay);
    } catch (const registry::RegistryError& e) {
        throw Failure(std::string("cannot read the release registry: ") + e.what() +
                      "; set CVM_REGISTRY_DIR to cvm's registry/ folder");
    }
}

std::string release_month(const std::string& date) { return date.substr(0, 7); }

nlohmann::json released_json(const std::string& date) {
    return date.empty() ? nlohmann::json(nullptr) : nlohmann::json(release_month(date));
}

std::vector<KnownRelease> known_releases(const registry::Registry& reg, const Store& store, Kind kind,
                                         const std::optional<Version>& prefix, bool prefix_is_cuda) {
    std::vector<KnownRelease> out;
    auto installed = installed_ids(store, kind);
    if (kind == Kind::Cuda) {
        for (auto it = reg.cuda.rbegin(); it != reg.cuda.rend(); ++it) {
            if (prefix && !it->version.has_prefix(*prefix)) continue;
            KnownRelease r;
            r.kind = Kind::Cuda;
            r.id = it->version.str();
            r.version = it->version;
            r.date = it->date;
            r.manifest = it->manifest;
            r.how = registry::how_fetched(*it);
            r.installable = r.how != registry::Fetch::Installer ||
                            !(platform::host_os() == platform::Os::Windows ? it->installer_windows
                                                                            : it->installer_linux)
                                 .empty();
            r.installed = installed.count(r.id) != 0;
            r.cuda = &*it;
            out.push_back(std::move(r));
        }
        return out;
    }
    if (kind == Kind::Nccl) {
        const auto& releases = nccl_releases();
        const std::string host =
            platform::host_os() == platform::Os::Windows ? "windows-x86_64" : "linux-x86_64";
        for (auto it = releases.rbegin(); it != releases.rend(); ++it) {
            if (prefix && !prefix_is_cuda && !it->version.has_prefix(*prefix)) continue;
            for (auto b = it->builds.rbegin(); b != it->builds.rend(); ++b) {
                // An NCCL build serves every toolkit of its CUDA major.
                if (prefix && prefix_is_cuda && b->cuda.major() != prefix->major()) continue;
                KnownRelease r;
                r.kind = Kind::Nccl;
                r.id = NcclId{it->version, b->cuda}.str();
                r.version = it->version;
                r.how = registry::Fetch::Archive;
                r.installable = b->archive_for(host) != nullptr;
                r.installed = installed.count(r.id) != 0;
                r.nccl = &*b;
                out.push_back(std::move(r));
            }
        }
        return out;
    }
    for (auto it = reg.cudnn.rbegin(); it != reg.cudnn.rend(); ++it) {
        if (prefix && !prefix_is_cuda && !it->version.has_prefix(*prefix)) continue;
        for (const auto& b : it->builds) {
            if (prefix && prefix_is_cuda && !supports_prefix(b, *prefix)) continue;
            KnownRelease r;
            r.kind = Kind::Cudnn;
            r.id = CudnnId{it->version, b.cuda}.str();
            r.version = it->version;
            r.date = it->date;
            r.manifest = it->manifest;
            r.how = registry::how_fetched(*it);
            r.installed = installed.count(r.id) != 0;
            r.build = &b;
            out.push_back(std::move(r));
        }
    }
    return out;
}

void list_available(ReleaseFilter filter, bool json) {
    auto prefix = release_prefix(filter, "list");
    registry::OverlayState overlay;
    registry::Registry reg = load_registry_or_fail(&overlay);
    Store store = open_store();
    // Without KIND, a PREFIX is a CUDA version: its toolkits and the cuDNN builds for them.
    bool prefix_is_cuda = filter.kind.empty();
    nlohmann::json doc = nlohmann::json::object();
    std::vector<std::pair<Kind, std::vector<KnownRelease>>> tables;
    for (Kind k : all_kinds())
        if (filter.kind.empty() || filter.kind == kind_dir(k))
            tables.emplace_back(k, known_releases(reg, store, k, prefix, prefix_is_cuda));
    for (const auto& [k, rows] : tables) {
        nlohmann::json items = nlohmann::json::array();
        for (const KnownRelease& r : rows) {
            nlohmann::json j;
            j["id"] = r.id;
            j["date"] = r.date;
            j["released"] = released_json(r.date);
            j["manifest"] = r.manifest;
            j["how"] = registry::fetch_name(r.how);
            // What `cvm install` fetches by itself: the rest needs the user's download.
            j["installable"] = r.installable;
            j["installed"] = r.installed;
            if (r.cuda) {
                if (r.cuda->driver_linux) j["driver_linux"] = r.cuda->driver_linux->text;
                if (r.cuda->driver_windows) j["driver_windows"] = r.cuda->driver_windows->text;
                std::string d = min_driver_text(reg, r);
                j["min_driver"] = d.empty() ? nlohmann::json(nullptr) : nlohmann::json(d);
            }
            if (r.build) {
                j["cuda"] = r.build->cuda.str();
                j["supports"] = r.build->supports_min.str() + "-" + r.build->supports_max.str();
            }
            if (r.nccl) {
                j["cuda"] = r.nccl->cuda.str();
                j["supports"] = std::to_string(r.nccl->cuda.major()) + ".x";
            }
            items.push_back(std::move(j));
        }
        doc[kind_dir(k)] = std::move(items);
    }
    doc["registry"] = {{"overlay", overlay.present ? nlohmann::json(overlay.file.u8string()) : nlohmann::json(nullptr)},
                       {"updated", overlay.present ? nlohmann::json(overlay.updated) : nlohmann::json(nullptr)},
                       {"added", overlay.added}};
    if (json) {
        print_json(doc);
        return;
    }
    std::string out;
    auto row = [&out](bool mark, std::vector<std::pair<std::string, std::size_t>> cells) {
        std::string line = mark ? "* " : "  ";
        for (const auto& [text, width] : cells) {
            line += text;
            if (text.size() < width) line.append(width - text.size(), ' ');
            line += "  ";
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
    };
    for (const auto& [k, rows] : tables) {
        out += std::string(kind_dir(k)) + " (available" + (prefix ? ", " + prefix->str() + "*" : std::string()) + ")\n";
        bool cuda = k == Kind::Cuda;
        row(false, {{"VERSION", 19}, {"RELEASED", 8}, {cuda ? "MIN DRIVER" : "CUDA", 10}, {"HOW", 0}});
        if (rows.empty()) out += "  (none known)\n";
        for (const KnownRelease& r : rows) {
            std::string third =
                cuda     ? min_driver_text(reg, r)
                : r.nccl ? r.nccl->cuda.str() + " (" + std::to_string(r.nccl->cuda.major()) + ".x)"
                         : r.build->supports_min.str() + "-" + r.build->supports_max.str();
            row(r.installed, {{r.id, 19},
                              {r.date.empty() ? "-" : release_month(r.date), 8},
                              {third.empty() ? "-" : third, 10},
                              {r.installable ? registry::fetch_name(r.how) : "-", 0}});
        }
    }
    out += "* installed. HOW: manifest = `cvm install` fetches it; archive = `cvm install` fetches its archive "
           "from NVIDIA's public folder; installer = `cvm install` fetches NVIDIA's local installer (`-`: none known for "
           "this platform; download it and run `cvm install FILE`)\n";
    out += registry_age_line(overlay) + "\n";
    out = escape_controls(out, true); // overlay rows come from a mirror
    std::fwrite(out.data(), 1, out.size(), stdout);
}

} // namespace cvm::cli
