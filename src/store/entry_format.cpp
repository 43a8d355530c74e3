// The entry file's text, both ways: serialize_entry writes it, parse_entry reads it.
#include "store/entry_format.h"

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "spec/spec.h"
#include "config/url_credentials.h"

namespace cvm {

static std::string join_list(const std::vector<std::string>& v, char sep) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
        if (i) out.push_back(sep);
        out += v[i];
    }
    return out;
}

std::vector<std::string> split_list(const std::string& s, char sep) {
    std::vector<std::string> out;
    if (s.empty()) return out;
    size_t start = 0;
    while (true) {
        size_t end = s.find(sep, start);
        out.push_back(s.substr(start, end - start));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return out;
}

std::string serialize_entry(const Entry& e) {
    std::ostringstream out;
    out << "kind=" << kind_dir(e.kind) << "\n";
    out << "id=" << e.id << "\n";
    out << "version=" << e.version.str() << "\n";
    if (e.kind != Kind::Cuda) out << "cuda=" << e.cuda.str() << "\n";
    out << "source=" << (e.imported ? "imported" : "installed") << "\n";
    if (e.imported && !e.origin.empty()) out << "origin=" << e.origin.u8string() << "\n";
    else if (e.imported) out << "path=" << e.path.u8string() << "\n";
    out << "include=" << join_list(e.include_dirs, ';') << "\n";
    out << "lib=" << join_list(e.lib_dirs, ';') << "\n";
    out << "bin=" << join_list(e.bin_dirs, ';') << "\n";
    if (!e.platform.empty()) out << "platform=" << e.platform << "\n";
    for (const auto& c : e.components) out << "component=" << c << "\n";
    for (const auto& a : e.archives)
        out << "archive=" << a.sha256 << " " << a.name << " " << without_url_credentials(a.url)
            << "\n";
    for (const auto& a : e.archives)
        if (a.first_use) out << "first_use=" << a.name << "\n";
    if (!e.note.empty()) out << "note=" << e.note << "\n";
    if (!e.stamp.empty()) out << "stamp=" << e.stamp << "\n";
    return out.str();
}

Entry parse_entry(const std::string& text, const fs::path& dir, const std::string& source) {
    Entry e;
    e.entry_dir = dir;
    bool have_kind = false;
    std::string_view rest(text);
    int number = 0;
    auto bad = [&](const std::string& why) {
        return std::runtime_error(source + ":" + std::to_string(number) + ": " + why +
                                  "; remove the folder " + dir.u8string() + " and import or install again");
    };
    while (!rest.empty()) {
        size_t nl = rest.find('\n');
        std::string_view line = rest.substr(0, nl);
        rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
        ++number;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty() || line[0] == '#') continue;
        size_t eq = line.find('=');
        if (eq == std::string_view::npos) throw bad("expected key=value");
        std::string_view key = line.substr(0, eq);
        std::string value(line.substr(eq + 1));
        if (key == "kind") {
            if (auto k = kind_of_dir(value))
                e.kind = *k;
            else throw bad("unknown kind '" + printable(value) + "'");
            have_kind = true;
        } else if (key == "id") {
            e.id = value;
        } else if (key == "version") {
            auto v = parse_version(value, 1, 4);
            if (!v) throw bad("bad version '" + printable(value) + "'");
            e.version = *v;
        } else if (key == "cuda") {
            auto v = parse_version(value, 1, 2);
            if (!v) throw bad("bad cuda '" + printable(value) + "'");
            e.cuda = *v;
        } else if (key == "source") {
            e.imported = value == "imported";
        } else if (key == "path") {
            e.path = fs::u8path(value);
        } else if (key == "origin") {
            e.origin = fs::u8path(value);
        } else if (key == "include") {
            e.include_dirs = split_list(value, ';');
        } else if (key == "lib") {
            e.lib_dirs = split_list(value, ';');
        } else if (key == "bin") {
            e.bin_dirs = split_list(value, ';');
        } else if (key == "platform") {
            e.platform = value;
        } else if (key == "component") {
            e.components.push_back(value);
        } else if (key == "archive") {
            ArchiveRecord a;
            size_t s1 = value.find(' ');
            size_t s2 = s1 == std::string::npos ? s1 : value.find(' ', s1 + 1);
            a.sha256 = value.substr(0, s1);
            if (s1 != std::string::npos) a.name = value.substr(s1 + 1, s2 == std::string::npos ? std::string::npos : s2 - s1 - 1);
            if (s2 != std::string::npos) a.url = value.substr(s2 + 1);
            e.archives.push_back(a);
        } else if (key == "first_use") {
            for (auto& a : e.archives)
                if (a.name == value) a.first_use = true;
        } else if (key == "note") {
            e.note = value;
        } else if (key == "stamp") {
            e.stamp = value;
        }
        // Unknown keys are ignored, so newer cvm versions can add some.
    }
    if (!have_kind || e.id.empty() || e.version.empty()) throw bad("kind, id or version missing");
    if (!e.imported || e.path.empty()) e.path = dir / "root";
    return e;
}

} // namespace cvm
