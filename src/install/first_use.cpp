#include "install/first_use.h"

#include "store/store.h"
#include "text/toml_input.h"
#include "text/toml_output.h"
#include "config/trust.h"
#include "install/error.h"
#include "install/sha256.h"
#include "platform/platform.h"

#include <cctype>
#include <sstream>

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

struct RecordError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

} // namespace

fs::path first_use_file(const Store& store) {
    return store.root() / "registry" / "first-use.toml";
}

std::vector<FirstUseRecord> parse_first_use(const std::string& text, const std::string& origin) {
    const std::string advice = "; fix or remove that record (the archive is then trusted on its next download)";
    std::vector<FirstUseRecord> out;
    try {
        toml::table doc = parse_toml<RecordError>(text, origin, advice);
        const toml::array* rows = doc["archive"].as_array();
        if (rows == nullptr) return out;
        for (const auto& row : *rows) {
            auto bad = [&](const std::string& what) {
                return RecordError(origin + ":" + std::to_string(row.source().begin.line) + ": " + what + advice);
            };
            const toml::table* t = row.as_table();
            if (t == nullptr) throw bad("archive: expected a table");
            FirstUseRecord r;
            r.name = (*t)["name"].value_or(std::string());
            r.sha256 = (*t)["sha256"].value_or(std::string());
            if (r.name.empty()) throw bad("archive: name missing");
            if (!is_sha256_hex(r.sha256)) throw bad(r.name + ": sha256 must be 64 hex digits");
            for (auto& c : r.sha256) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            auto size = (*t)["size"].value<std::int64_t>();
            if (!size || *size <= 0) throw bad(r.name + ": size must be a positive number");
            r.size = static_cast<std::uint64_t>(*size);
            r.url = (*t)["url"].value_or(std::string());
            r.first_use = (*t)["first_use"].value_or(std::string());
            out.push_back(std::move(r));
        }
    } catch (const RecordError& e) {
        fail_input(e.what(), "first_use");
    }
    return out;
}

std::string format_first_use(const std::vector<FirstUseRecord>& records) {
    std::ostringstream out;
    out << "# Archives cvm trusted on first use: no public source gives their SHA-256, so the sum of\n"
           "# the first download is recorded here and every later download must match it. Written by\n"
           "# cvm; remove a record only when you know the archive changed on NVIDIA's side.\n";
    for (const auto& r : records) {
        out << "\n[[archive]]\nname = " << toml_basic_string(r.name)
            << "\nsha256 = " << toml_basic_string(r.sha256)
            << "\nsize = " << r.size << "\n";
        if (!r.url.empty()) out << "url = " << toml_basic_string(r.url) << "\n";
        if (!r.first_use.empty()) out << "first_use = " << toml_basic_string(r.first_use) << "\n";
    }
    return out.str();
}

std::vector<FirstUseRecord> read_first_use(const fs::path& file) {
    // Its folder first: whoever may write it could remove the record (absent, the next download
    // would be trusted on first use again) or put another in its place.
    if (auto folder = platform::file_meta(file.parent_path())) {
        try {
            check_trusted("the folder of the record of archives trusted on first use",
                          file.parent_path(), *folder);
        } catch (const TrustError& e) {
            fail_input(e.what(), "untrusted");
        }
    }
    platform::FileRead read = platform::read_file_checked(file.u8string());
    if (read.absent()) return {};
    if (read.error != 0)
        fail_operation("cannot read " + file.u8string() + ": " + platform::error_text(read.error));
    if (!read.text)
        fail_input(file.u8string() + " is " + platform::file_type_text(file) +
                   ", not a file; remove it (it records archives trusted on first use)");
    try {
        check_trusted("the record of archives trusted on first use", file, read.meta);
    } catch (const TrustError& e) {
        fail_input(e.what(), "untrusted");
    }
    return parse_first_use(*read.text, file.u8string());
}

std::optional<FirstUseRecord> find_first_use(const fs::path& file, const std::string& name) {
    for (auto& r : read_first_use(file))
        if (r.name == name) return r;
    return std::nullopt;
}

FirstUseRecord record_first_use(const fs::path& file, const fs::path& locks_dir, const FirstUseRecord& record) {
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    if (ec) fail_operation("cannot create " + file.parent_path().u8string() + ": " + ec.message());
    fs::create_directories(locks_dir, ec);
    platform::FileLock lock;
    lock.acquire(locks_dir / "first-use.lock");
    auto records = read_first_use(file);
    for (const auto& r : records)
        if (r.name == record.name) return r;
    records.push_back(record);
    try {
        platform::write_file_atomically(file, format_first_use(records));
    } catch (const fs::filesystem_error& e) {
        fail_operation("cannot write " + file.u8string() + ": " + e.code().message() +
                       "; the archive was installed, but its first-use sum is not recorded");
    }
    return record;
}

} // namespace cvm::install
