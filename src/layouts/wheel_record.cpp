#include "layouts/wheel_record.h"

#include <algorithm>
#include <system_error>

#include "platform/platform.h"

namespace cvm {

namespace fs = std::filesystem;

namespace {

// The CSV fields of a RECORD line (a field is quoted when it holds a comma).
std::vector<std::string> csv_fields(const std::string& line) {
    std::vector<std::string> out(1);
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        char ch = line[i];
        if (quoted) {
            if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                out.back() += '"';
                ++i;
            } else if (ch == '"') {
                quoted = false;
            } else {
                out.back() += ch;
            }
        } else if (ch == '"') {
            quoted = true;
        } else if (ch == ',') {
            out.emplace_back();
        } else {
            out.back() += ch;
        }
    }
    return out;
}

// "nvidia_nccl_cu13-2.32.6.dist-info" -> "nvidia-nccl-cu13==2.32.6", as pip takes it.
std::string pip_requirement(const std::string& dist_info) {
    std::string stem = dist_info.substr(0, dist_info.size() - 10);
    size_t dash = stem.find('-');
    if (dash == std::string::npos) return stem;
    std::string name = stem.substr(0, dash);
    std::replace(name.begin(), name.end(), '_', '-');
    return name + "==" + stem.substr(dash + 1);
}

} // namespace

std::vector<WheelRecordLine> parse_wheel_record(const std::string& text) {
    std::vector<WheelRecordLine> out;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t nl = text.find('\n', start);
        if (nl == std::string::npos) nl = text.size();
        std::string line = text.substr(start, nl - start);
        start = nl + 1;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        auto f = csv_fields(line);
        if (f.size() < 2 || f[1].rfind("sha256=", 0) != 0) continue;
        out.push_back({f[0], f[1].substr(7), f.size() > 2 ? f[2] : ""});
    }
    return out;
}

std::vector<fs::path> dist_infos(const fs::path& site, const std::string& prefix) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (fs::directory_iterator it(site, ec), end; !ec && it != end; it.increment(ec)) {
        std::string n = it->path().filename().u8string();
        if (n.rfind(prefix, 0) == 0 && n.size() > 10 && n.compare(n.size() - 10, 10, ".dist-info") == 0)
            out.push_back(it->path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::optional<std::string> wheel_install_damage(const fs::path& dist_info) {
    const std::string name = dist_info.filename().u8string();
    const std::string fix = "; reinstall it (pip install --force-reinstall " + pip_requirement(name) + ")";
    fs::path record = dist_info / "RECORD";
    auto text = platform::read_file(record, kWheelRecordLimit);
    if (!text)
        return "the wheel " + name + " in " + dist_info.parent_path().u8string() +
               " is half-installed: it has no readable RECORD of its files (" + record.u8string() + ")" + fix;
    const fs::path site = dist_info.parent_path();
    auto lines = parse_wheel_record(*text);
    if (lines.empty())
        return "the wheel " + name + " in " + site.u8string() + " is half-installed: its RECORD (" +
               record.u8string() + ") lists no files" + fix;
    for (const auto& line : lines) {
        fs::path file = (site / fs::u8path(line.path)).lexically_normal();
        std::error_code ec;
        if (!fs::exists(fs::symlink_status(file, ec)))
            return "the wheel " + name + " in " + site.u8string() + " is half-installed: its RECORD names " +
                   line.path + ", which is not there" + fix;
    }
    return std::nullopt;
}

std::optional<std::string> wheel_folder_damage(const fs::path& site, const fs::path& folder,
                                               const std::string& prefix, bool prefix_is_one_project) {
    const std::string below = folder.lexically_relative(site).generic_u8string() + "/";
    for (const auto& info : dist_infos(site, prefix)) {
        auto text = platform::read_file(info / "RECORD", kWheelRecordLimit);
        if (!text) {
            if (prefix_is_one_project) return wheel_install_damage(info);
            continue;
        }
        bool writes_there = false;
        for (const auto& line : parse_wheel_record(*text))
            if (line.path.rfind(below, 0) == 0) {
                writes_there = true;
                break;
            }
        if (!writes_there && !prefix_is_one_project) continue;
        if (auto damage = wheel_install_damage(info)) return damage;
    }
    return std::nullopt;
}

} // namespace cvm
