#include "image/image_config.h"

#include "platform/platform.h"

#include <algorithm>
#include <cstdio>

namespace cvm::image {

std::string rfc3339(std::time_t t) {
    std::tm tm = platform::utc_time(t);
    char text[64];
    std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    return text;
}

namespace {

bool names(const std::string& item, const std::string& name) {
    return item.size() > name.size() && item.compare(0, name.size(), name) == 0 &&
           item[name.size()] == '=';
}

} // namespace

std::vector<std::string> apply_env(std::vector<std::string> env,
                                   const std::vector<EnvChange>& changes) {
    for (const auto& c : changes) {
        auto it = std::find_if(env.begin(), env.end(),
                               [&](const std::string& i) { return names(i, c.name); });
        if (!c.value) {
            if (it != env.end()) env.erase(it);
        } else if (it != env.end()) {
            *it = c.name + "=" + *c.value;
        } else {
            env.push_back(c.name + "=" + *c.value);
        }
    }
    return env;
}

std::optional<std::string> env_value(const std::vector<std::string>& env, const std::string& name) {
    for (const auto& i : env)
        if (names(i, name)) return i.substr(name.size() + 1);
    return std::nullopt;
}

nlohmann::json image_config(const ConfigInput& in) {
    nlohmann::json doc = in.base ? *in.base : nlohmann::json::object();
    doc["created"] = in.created;
    doc["architecture"] = in.architecture;
    doc["os"] = "linux";
    nlohmann::json& config = doc["config"];
    if (!config.is_object()) config = nlohmann::json::object();
    config["Env"] = in.env;
    nlohmann::json& labels = config["Labels"];
    if (!labels.is_object()) labels = nlohmann::json::object();
    for (const auto& [k, v] : in.labels)
        labels[k] = v;
    nlohmann::json& rootfs = doc["rootfs"];
    if (!rootfs.is_object()) rootfs = nlohmann::json::object();
    rootfs["type"] = "layers";
    if (!rootfs.contains("diff_ids") || !rootfs["diff_ids"].is_array())
        rootfs["diff_ids"] = nlohmann::json::array();
    rootfs["diff_ids"].push_back(in.diff_id);
    // History entries stand for layers: a base image without any keeps none, rather than one
    // entry for several layers.
    if (!in.base || (doc.contains("history") && doc["history"].is_array())) {
        nlohmann::json& history = doc["history"];
        if (!history.is_array()) history = nlohmann::json::array();
        history.push_back({{"created", in.created}, {"created_by", in.created_by}});
    }
    return doc;
}

} // namespace cvm::image
