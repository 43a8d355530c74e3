#include "install/installed_files.h"

#include "platform/platform.h"

#include <charconv>
#include <cstdio>
#include <stdexcept>
#include <string_view>
#include <system_error>

namespace cvm {

namespace {

std::string octal_mode(std::uint32_t mode) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
    return buf;
}

// "0755 rest" -> mode 0755, `line` left at "rest"; false when it does not start so.
bool take_mode(std::string_view& line, std::uint32_t& mode) {
    size_t space = line.find(' ');
    if (space != 4) return false;
    mode = 0;
    for (size_t i = 0; i < 4; ++i) {
        if (line[i] < '0' || line[i] > '7') return false;
        mode = mode * 8 + static_cast<std::uint32_t>(line[i] - '0');
    }
    line.remove_prefix(5);
    return true;
}

} // namespace

std::string serialize_installed_files(const std::vector<InstalledFile>& files) {
    std::string out = "cvm-files 2\n";
    for (const auto& f : files) {
        switch (f.type) {
        case InstalledFile::Type::File:
            out += "f " + std::to_string(f.size) + " " + f.sha256 + " " + octal_mode(f.mode) + " " +
                   f.path + "\n";
            break;
        case InstalledFile::Type::Directory:
            out += "d " + octal_mode(f.mode) + " " + f.path + "\n";
            break;
        case InstalledFile::Type::Symlink:
            out += "l " + f.path + "\t" + f.target + "\n";
            break;
        }
    }
    out += "end " + std::to_string(files.size()) + "\n";
    return out;
}

std::vector<InstalledFile> parse_installed_files(const std::string& text, const std::string& source) {
    return parse_installed_record(text, source).files;
}

InstalledRecord parse_installed_record(const std::string& text, const std::string& source) {
    InstalledRecord record;
    std::vector<InstalledFile>& out = record.files;
    std::string_view rest(text);
    int number = 0;
    bool ended = false;
    auto bad = [&](const std::string& why) {
        return std::runtime_error(source + ":" + std::to_string(number) + ": " + why);
    };
    while (!rest.empty()) {
        size_t nl = rest.find('\n');
        std::string_view line = rest.substr(0, nl);
        rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
        ++number;
        if (number == 1) {
            if (line == "cvm-files 1")
                record.version = 1;
            else if (line != "cvm-files 2")
                throw bad("not a cvm file record (expected \"cvm-files 2\")");
            continue;
        }
        if (line.empty()) continue;
        if (ended) throw bad("a line after the end line");
        InstalledFile f;
        if (record.version == 2 && line.rfind("end ", 0) == 0) {
            std::string_view count = line.substr(4);
            std::size_t n = 0;
            auto [end, err] = std::from_chars(count.data(), count.data() + count.size(), n);
            if (count.empty() || err != std::errc() || end != count.data() + count.size() ||
                n != out.size())
                throw bad("the record is cut short or altered (its end line counts " +
                          std::string(count) + " entries, " + std::to_string(out.size()) +
                          " are there)");
            ended = true;
            continue;
        }
        if (record.version == 2 && line.rfind("d ", 0) == 0) {
            line.remove_prefix(2);
            f.type = InstalledFile::Type::Directory;
            if (!take_mode(line, f.mode)) throw bad("expected \"d MODE PATH\"");
            f.path = std::string(line);
        } else if (line.rfind("f ", 0) == 0) {
            line.remove_prefix(2);
            size_t s1 = line.find(' ');
            size_t s2 = s1 == std::string_view::npos ? s1 : line.find(' ', s1 + 1);
            if (s2 == std::string_view::npos)
                throw bad(record.version == 1 ? "expected \"f SIZE SHA256 PATH\""
                                              : "expected \"f SIZE SHA256 MODE PATH\"");
            std::string_view size = line.substr(0, s1);
            auto [end, err] = std::from_chars(size.data(), size.data() + size.size(), f.size);
            if (size.empty() || err != std::errc() || end != size.data() + size.size())
                throw bad("bad size \"" + std::string(size) + "\"");
            f.sha256 = std::string(line.substr(s1 + 1, s2 - s1 - 1));
            if (f.sha256.size() != 64 || f.sha256.find_first_not_of("0123456789abcdef") != std::string::npos)
                throw bad("bad sha256");
            line.remove_prefix(s2 + 1);
            if (record.version == 2 && !take_mode(line, f.mode))
                throw bad("expected \"f SIZE SHA256 MODE PATH\"");
            f.path = std::string(line);
        } else if (line.rfind("l ", 0) == 0) {
            line.remove_prefix(2);
            size_t tab = line.find('\t');
            if (tab == std::string_view::npos) throw bad("expected \"l PATH<TAB>TARGET\"");
            f.type = InstalledFile::Type::Symlink;
            f.path = std::string(line.substr(0, tab));
            f.target = std::string(line.substr(tab + 1));
        } else {
            throw bad("unknown line");
        }
        bool dotdot = f.path == ".." || f.path.rfind("../", 0) == 0 ||
                      f.path.find("/../") != std::string::npos ||
                      (f.path.size() >= 3 && f.path.compare(f.path.size() - 3, 3, "/..") == 0);
        const bool root_itself = f.type == InstalledFile::Type::Directory && f.path == ".";
        if (f.path.empty() || f.path.front() == '/' || dotdot || (f.path == "." && !root_itself) ||
            f.path.find_first_of("\t\r") != std::string::npos)
            throw bad("bad path \"" + f.path + "\"");
        out.push_back(std::move(f));
    }
    if (number == 0) throw bad("empty");
    if (record.version == 2 && !ended)
        throw bad("the record is cut short (it has no end line); run `cvm install --reinstall` of "
                  "the entry");
    return record;
}

std::optional<std::vector<InstalledFile>> read_installed_files(const fs::path& entry_dir) {
    auto record = read_installed_record(entry_dir);
    if (!record) return std::nullopt;
    return std::move(record->files);
}

std::optional<InstalledRecord> read_installed_record(const fs::path& entry_dir) {
    fs::path record = entry_dir / installed_files_name();
    auto text = platform::read_file(record, std::size_t(256) << 20);
    if (!text) return std::nullopt;
    return parse_installed_record(*text, record.u8string());
}

std::vector<FileDamage> check_installed_sizes(const fs::path& root,
                                              const std::vector<InstalledFile>& files) {
    std::vector<FileDamage> out;
    for (const auto& f : files) {
        fs::path p = root / fs::u8path(f.path);
        std::error_code ec;
        fs::file_status st = fs::symlink_status(p, ec);
        if (!fs::exists(st)) {
            out.push_back({f.path, "missing"});
            continue;
        }
        if (f.type == InstalledFile::Type::Directory) {
            if (!fs::is_directory(st)) out.push_back({f.path, "is no longer a folder"});
            continue;
        }
        if (f.type == InstalledFile::Type::Symlink) {
            if (!fs::is_symlink(st)) {
                out.push_back({f.path, "is no longer a link"});
                continue;
            }
            fs::path target = fs::read_symlink(p, ec);
            if (ec || target.generic_u8string() != f.target)
                out.push_back({f.path, "link points to \"" + target.generic_u8string() + "\", not \"" +
                                           f.target + "\""});
            continue;
        }
        if (!fs::is_regular_file(st)) {
            out.push_back({f.path, "is no longer a regular file"});
            continue;
        }
        std::uintmax_t size = fs::file_size(p, ec);
        if (ec) {
            out.push_back({f.path, "unreadable: " + ec.message()});
        } else if (size != f.size) {
            out.push_back({f.path, std::to_string(size) + " bytes, " + std::to_string(f.size) +
                                       " written at install"});
        }
    }
    return out;
}

} // namespace cvm
