#include "install/owner_records.h"

#include "platform/platform.h"

#include <set>
#include <system_error>
#include <vector>

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t nl = text.find('\n', start);
        if (nl == std::string::npos) nl = text.size();
        std::string line = text.substr(start, nl - start);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        out.push_back(std::move(line));
        start = nl + 1;
    }
    return out;
}

// Calls `each(name, record, lines)` for every <dir>/<name>.dist-info/RECORD that can be read.
template <class Each> void for_each_wheel_record(const fs::path& dir, Each each) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().u8string();
        if (name.size() < 10 || name.compare(name.size() - 10, 10, ".dist-info") != 0) continue;
        fs::path record = it->path() / "RECORD";
        if (auto text = platform::read_file(record, kWheelRecordLimit))
            each(name, record, parse_wheel_record(*text));
    }
}

} // namespace

// Wheels' RECORD files of the site-packages folders that hold `files`.
void read_wheel_records(const std::map<fs::path, std::string>& files,
                        std::map<fs::path, OwnerRecord>& out) {
    std::set<fs::path> site_dirs;
    for (const auto& [real, shown] : files)
        for (fs::path p = real.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path()) {
            std::string name = p.filename().u8string();
            if (name == "site-packages" || name == "dist-packages") {
                site_dirs.insert(p);
                break;
            }
        }
    for (const auto& site : site_dirs)
        for_each_wheel_record(site, [&](const std::string& name, const fs::path& record,
                                        const std::vector<WheelRecordLine>& lines) {
            for (const auto& line : lines) {
                fs::path abs = (site / fs::u8path(line.path)).lexically_normal();
                if (!files.count(abs)) continue;
                out[abs] = {OwnerRecord::Kind::Wheel, line.digest, line.size, name, record.u8string()};
            }
        });
}

void read_assembled_wheel_records(const fs::path& root,
                                  const std::map<fs::path, std::string>& files,
                                  std::map<fs::path, OwnerRecord>& out) {
    std::error_code ec;
    fs::path top = fs::canonical(root, ec);
    if (ec) return;
    for_each_wheel_record(top / "dist-info", [&](const std::string& name, const fs::path& record,
                                                 const std::vector<WheelRecordLine>& lines) {
        for (const auto& line : lines) {
            // nvidia/cu13/lib/libcublas.so.13 -> <root>/lib/libcublas.so.13; the dist-info's own
            // files -> <root>/dist-info/<name>.dist-info/...
            std::string rel = line.path;
            if (rel.rfind("nvidia/", 0) == 0) {
                auto slash = rel.find('/', 7);
                if (slash == std::string::npos) continue;
                rel = rel.substr(slash + 1);
            } else {
                rel = "dist-info/" + rel;
            }
            std::error_code e2;
            fs::path abs = fs::weakly_canonical(top / fs::u8path(rel), e2);
            if (e2 || !files.count(abs) || out.count(abs)) continue;
            out[abs] = {OwnerRecord::Kind::Wheel, line.digest, line.size, name, record.u8string()};
        }
    });
}

// dpkg's md5sums lists for the files among `files` that no wheel record covers.
void read_dpkg_records(const std::map<fs::path, std::string>& files, const fs::path& info,
                       std::map<fs::path, OwnerRecord>& out) {
    std::set<std::string> names;
    for (const auto& [real, shown] : files)
        if (!out.count(real)) names.insert(real.filename().u8string());
    if (names.empty()) return;
    std::error_code ec;
    for (fs::directory_iterator it(info, ec), end; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().u8string();
        if (name.size() < 9 || name.compare(name.size() - 8, 8, ".md5sums") != 0) continue;
        auto text = platform::read_file(it->path(), kWheelRecordLimit);
        if (!text) continue;
        for (const auto& line : lines_of(*text)) {
            // "<md5>  <path relative to />"
            if (line.size() < 35 || line[32] != ' ') continue;
            std::string rel = line.substr(34);
            auto slash = rel.rfind('/');
            if (!names.count(slash == std::string::npos ? rel : rel.substr(slash + 1))) continue;
            std::error_code e2;
            fs::path abs = fs::weakly_canonical(fs::u8path("/" + rel), e2);
            if (e2 || !files.count(abs) || out.count(abs)) continue;
            out[abs] = {OwnerRecord::Kind::Dpkg, line.substr(0, 32), "",
                        name.substr(0, name.size() - 8), it->path().u8string()};
        }
    }
}

std::string hex_to_urlsafe_base64(const std::string& hex) {
    static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::vector<unsigned char> bytes;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
        bytes.push_back(static_cast<unsigned char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    std::string out;
    std::size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        unsigned v = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
        for (int s = 18; s >= 0; s -= 6)
            out += alphabet[(v >> s) & 63];
    }
    if (i + 1 == bytes.size()) {
        unsigned v = bytes[i] << 16;
        out += alphabet[(v >> 18) & 63];
        out += alphabet[(v >> 12) & 63];
    } else if (i + 2 == bytes.size()) {
        unsigned v = (bytes[i] << 16) | (bytes[i + 1] << 8);
        out += alphabet[(v >> 18) & 63];
        out += alphabet[(v >> 12) & 63];
        out += alphabet[(v >> 6) & 63];
    }
    return out;
}

} // namespace cvm::install
