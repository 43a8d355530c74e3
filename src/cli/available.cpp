#include <cstdio>

#include "cli/commands.h"
#include "cli/context.h"
#include "registry/registry.h"

namespace cvm::cli {

// Offline: everything comes from the registry data shipped with cvm.
void list_available(const std::string& kind, bool json) {
    registry::Registry reg;
    try {
        reg = registry::load_default_registry();
    } catch (const registry::RegistryError& e) {
        throw Failure(std::string("cannot read the release registry: ") + e.what() +
                      "; set CVM_REGISTRY_DIR to cvm's registry/ folder");
    }
    Store store = open_store();
    nlohmann::json doc = nlohmann::json::object();
    if (kind.empty() || kind == "cuda") {
        nlohmann::json items = nlohmann::json::array();
        for (auto it = reg.cuda.rbegin(); it != reg.cuda.rend(); ++it) {
            nlohmann::json j;
            j["id"] = it->version.str();
            j["date"] = it->date;
            j["manifest"] = it->manifest;
            j["installable"] = !it->manifest.empty();
            j["installed"] = store.find(Kind::Cuda, it->version.str()).has_value();
            if (it->driver_linux) j["driver_linux"] = it->driver_linux->text;
            if (it->driver_windows) j["driver_windows"] = it->driver_windows->text;
            items.push_back(j);
        }
        doc["cuda"] = items;
    }
    if (kind.empty() || kind == "cudnn") {
        nlohmann::json items = nlohmann::json::array();
        for (auto it = reg.cudnn.rbegin(); it != reg.cudnn.rend(); ++it) {
            for (const auto& b : it->builds) {
                std::string id = CudnnId{it->version, b.cuda}.str();
                nlohmann::json j;
                j["id"] = id;
                j["date"] = it->date;
                j["manifest"] = it->manifest;
                j["supports"] = b.supports_min.str() + "-" + b.supports_max.str();
                j["installable"] = !it->manifest.empty() || !b.linux_archives.empty() || !b.windows_archives.empty();
                j["installed"] = store.find(Kind::Cudnn, id).has_value();
                items.push_back(j);
            }
        }
        doc["cudnn"] = items;
    }
    if (json) {
        print_json(doc);
        return;
    }
    for (const char* k : {"cuda", "cudnn"}) {
        if (!doc.contains(k)) continue;
        std::printf("%s (available)\n", k);
        for (const auto& j : doc[k]) {
            std::string extra = std::string(k) == "cudnn" ? "CUDA " + j["supports"].get<std::string>() : j["manifest"].get<std::string>();
            std::printf("%s %-22s %-8s %s\n", j["installed"].get<bool>() ? "*" : " ", j["id"].get<std::string>().c_str(),
                        j["date"].get<std::string>().c_str(), extra.c_str());
        }
    }
}

} // namespace cvm::cli
