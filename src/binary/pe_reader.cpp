#include "binary/pe_reader.h"

#include <algorithm>
#include <cstring>

namespace cvm::binary {

namespace {

constexpr std::uint32_t dir_import = 1;
constexpr std::uint32_t dir_resource = 2;
constexpr std::uint32_t dir_delay_import = 13;
constexpr std::uint32_t rt_version = 16;
constexpr std::uint32_t fixed_file_info_signature = 0xFEEF04BD;

// Limits far above any real DLL; beyond them the file is corrupt or hostile.
constexpr std::size_t max_sections = 96; // the PE loader's own limit
constexpr std::size_t max_import_dlls = 4096;
constexpr std::size_t max_resource_entries = 4096;
constexpr std::uint32_t max_version_resource = 1u << 20;
constexpr std::size_t max_name = 1024;

struct SectionEntry {
    std::uint32_t virtual_address = 0;
    std::uint32_t virtual_size = 0;
    std::uint32_t raw_size = 0;
    std::uint32_t raw_offset = 0;
};

class Image {
public:
    Image(const ByteSource& src, std::vector<SectionEntry> sections, std::uint32_t header_size)
        : src_(src), sections_(std::move(sections)), header_size_(header_size) {}

    // File offset of an RVA and how many bytes of the containing section follow it.
    bool map(std::uint32_t rva, std::uint64_t& offset, std::uint64_t& available) const {
        for (const auto& s : sections_) {
            const std::uint32_t span = std::max(s.virtual_size, s.raw_size);
            if (rva < s.virtual_address || rva - s.virtual_address >= span) continue;
            const std::uint32_t delta = rva - s.virtual_address;
            if (delta >= s.raw_size) return false; // in the zero-filled tail: nothing on disk
            offset = static_cast<std::uint64_t>(s.raw_offset) + delta;
            available = s.raw_size - delta;
            return true;
        }
        if (rva < header_size_) {
            offset = rva;
            available = header_size_ - rva;
            return true;
        }
        return false;
    }

    std::optional<std::vector<std::uint8_t>> read(std::uint32_t rva, std::uint64_t length) const {
        std::uint64_t offset = 0, available = 0;
        if (!map(rva, offset, available) || length > available) return std::nullopt;
        return src_.read(offset, length);
    }

    std::optional<std::string> ascii_string(std::uint32_t rva) const {
        std::uint64_t offset = 0, available = 0;
        if (!map(rva, offset, available)) return std::nullopt;
        auto bytes = src_.read_up_to(offset, std::min<std::uint64_t>(available, max_name + 1));
        if (!bytes) return std::nullopt;
        return ByteView(bytes->data(), bytes->size()).c_string(0, max_name);
    }

private:
    const ByteSource& src_;
    std::vector<SectionEntry> sections_;
    std::uint32_t header_size_;
};

bool printable_name(const std::string& s) {
    if (s.empty()) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u >= 0x20 && u < 0x7f;
    });
}

void read_imports(const Image& image, std::uint32_t rva, std::uint32_t size, PeInfo& info) {
    constexpr std::uint32_t entry = 20;
    (void)size; // the table ends at its all-zero entry; the declared size is often wrong
    for (std::size_t i = 0; i < max_import_dlls; ++i) {
        const std::uint64_t at = static_cast<std::uint64_t>(rva) + i * entry;
        if (at > 0xffffffffu) {
            info.warnings.push_back("import directory runs past the image");
            return;
        }
        auto bytes = image.read(static_cast<std::uint32_t>(at), entry);
        if (!bytes) {
            info.warnings.push_back("import directory lies outside the file");
            return;
        }
        ByteView v(bytes->data(), bytes->size());
        const std::uint32_t name_rva = *v.le32(12);
        bool all_zero =
            std::all_of(bytes->begin(), bytes->end(), [](std::uint8_t b) { return b == 0; });
        if (all_zero || name_rva == 0) return;
        auto name = image.ascii_string(name_rva);
        if (!name || !printable_name(*name)) {
            info.warnings.push_back("import entry " + std::to_string(i) +
                                    " has an unreadable name");
            continue;
        }
        info.imports.push_back(*name);
    }
    info.warnings.push_back("import directory has too many entries");
}

void read_delay_imports(const Image& image, std::uint32_t rva, std::uint64_t image_base,
                        PeInfo& info) {
    constexpr std::uint32_t entry = 32;
    for (std::size_t i = 0; i < max_import_dlls; ++i) {
        const std::uint64_t at = static_cast<std::uint64_t>(rva) + i * entry;
        if (at > 0xffffffffu) return;
        auto bytes = image.read(static_cast<std::uint32_t>(at), entry);
        if (!bytes) {
            info.warnings.push_back("delay import directory lies outside the file");
            return;
        }
        ByteView v(bytes->data(), bytes->size());
        const std::uint32_t attributes = *v.le32(0);
        std::uint64_t name = *v.le32(4);
        if (name == 0) return;
        // Attribute bit 0 clear: an old (Visual C++ 6) table whose fields are addresses, not RVAs.
        if ((attributes & 1) == 0) {
            if (name < image_base || name - image_base > 0xffffffffu) {
                info.warnings.push_back("delay import entry " + std::to_string(i) +
                                        " has a bad address");
                continue;
            }
            name -= image_base;
        }
        auto text = image.ascii_string(static_cast<std::uint32_t>(name));
        if (!text || !printable_name(*text)) {
            info.warnings.push_back("delay import entry " + std::to_string(i) +
                                    " has an unreadable name");
            continue;
        }
        info.delay_imports.push_back(*text);
    }
}

// ---- resources -------------------------------------------------------------------------

struct DirEntry {
    std::uint32_t name = 0; // id, or (high bit set) an offset to a name string
    std::uint32_t target = 0;
    bool is_directory() const { return (target & 0x80000000u) != 0; }
    std::uint32_t offset() const { return target & 0x7fffffffu; }
};

std::optional<std::vector<DirEntry>> directory_entries(const Image& image, std::uint32_t base,
                                                       std::uint32_t offset) {
    const std::uint64_t at = static_cast<std::uint64_t>(base) + offset;
    if (at > 0xffffffffu) return std::nullopt;
    auto header = image.read(static_cast<std::uint32_t>(at), 16);
    if (!header) return std::nullopt;
    ByteView h(header->data(), header->size());
    const std::size_t count = static_cast<std::size_t>(*h.le16(12)) + *h.le16(14);
    if (count == 0) return std::vector<DirEntry>{};
    const std::size_t n = std::min(count, max_resource_entries);
    const std::uint64_t entries_at = at + 16;
    if (entries_at > 0xffffffffu) return std::nullopt;
    auto raw = image.read(static_cast<std::uint32_t>(entries_at), n * 8);
    if (!raw) return std::nullopt;
    ByteView v(raw->data(), raw->size());
    std::vector<DirEntry> out;
    for (std::size_t i = 0; i < n; ++i)
        out.push_back({*v.le32(i * 8), *v.le32(i * 8 + 4)});
    return out;
}

// A UTF-16LE NUL-terminated key at `offset`, as ASCII (non-ASCII units become '?').
// Returns the offset just after the terminator in `end`.
std::optional<std::string> utf16_key(const ByteView& v, std::uint64_t offset, std::uint64_t limit,
                                     std::uint64_t& end) {
    std::string out;
    for (std::uint64_t p = offset; p + 2 <= limit; p += 2) {
        auto unit = v.le16(p);
        if (!unit) return std::nullopt;
        if (*unit == 0) {
            end = p + 2;
            return out;
        }
        if (out.size() >= max_name) return std::nullopt;
        out.push_back(*unit < 0x80 ? static_cast<char>(*unit) : '?');
    }
    return std::nullopt;
}

std::uint64_t align4(std::uint64_t x) {
    return (x + 3) & ~std::uint64_t{3};
}

FourPartVersion version_from(std::uint32_t ms, std::uint32_t ls) {
    FourPartVersion v;
    v.parts = {static_cast<std::uint16_t>(ms >> 16), static_cast<std::uint16_t>(ms & 0xffff),
               static_cast<std::uint16_t>(ls >> 16), static_cast<std::uint16_t>(ls & 0xffff)};
    return v;
}

// One node of the version resource tree: wLength, wValueLength, wType, key, value, children.
struct VersionNode {
    std::uint64_t start = 0, end = 0; // [start, end) within the resource
    std::string key;
    std::uint64_t value_offset = 0;
    std::uint16_t value_length = 0;
    std::uint16_t type = 0; // 1: text (value_length counts UTF-16 units), 0: binary (bytes)
    std::uint64_t children_offset = 0;
};

std::optional<VersionNode> version_node(const ByteView& v, std::uint64_t start,
                                        std::uint64_t limit) {
    auto length = v.le16(start);
    auto value_length = v.le16(start + 2);
    auto type = v.le16(start + 4);
    if (!length || !value_length || !type || *length < 6) return std::nullopt;
    VersionNode n;
    n.start = start;
    n.end = std::min<std::uint64_t>(start + *length, limit);
    n.value_length = *value_length;
    n.type = *type;
    std::uint64_t key_end = 0;
    auto key = utf16_key(v, start + 6, n.end, key_end);
    if (!key) return std::nullopt;
    n.key = *key;
    n.value_offset = align4(key_end);
    const std::uint64_t value_bytes = n.type == 1 ? 2ull * n.value_length : n.value_length;
    n.children_offset = align4(n.value_offset + value_bytes);
    return n;
}

void read_string_file_info(const ByteView& v, const VersionNode& sfi, PeInfo& info) {
    // StringFileInfo > StringTable ("040904b0") > String ("FileVersion" = "...").
    std::uint64_t table_at = sfi.children_offset;
    while (table_at + 6 <= sfi.end) {
        auto table = version_node(v, table_at, sfi.end);
        if (!table || table->end <= table_at) return;
        std::uint64_t string_at = table->children_offset;
        while (string_at + 6 <= table->end) {
            auto s = version_node(v, string_at, table->end);
            if (!s || s->end <= string_at) break;
            std::uint64_t text_end = 0;
            std::string text;
            if (s->value_length > 0 && s->value_offset < s->end) {
                if (auto t = utf16_key(v, s->value_offset, s->end, text_end)) text = *t;
            }
            if (printable_name(s->key) && info.version_strings.size() < 64)
                info.version_strings.emplace(s->key, text);
            string_at = align4(s->end);
        }
        return; // the first table (first language) is enough
    }
}

void read_version_resource(const ByteView& v, PeInfo& info) {
    auto root = version_node(v, 0, v.size());
    if (!root || root->key != "VS_VERSION_INFO") {
        info.warnings.push_back("version resource does not start with VS_VERSION_INFO");
        return;
    }
    if (root->value_length >= 52) {
        auto signature = v.le32(root->value_offset);
        if (signature && *signature == fixed_file_info_signature) {
            auto fms = v.le32(root->value_offset + 8);
            auto fls = v.le32(root->value_offset + 12);
            auto pms = v.le32(root->value_offset + 16);
            auto pls = v.le32(root->value_offset + 20);
            if (fms && fls && pms && pls) {
                info.file_version = version_from(*fms, *fls);
                info.product_version = version_from(*pms, *pls);
            }
        } else {
            info.warnings.push_back("VS_FIXEDFILEINFO signature is missing");
        }
    }
    std::uint64_t child_at = root->children_offset;
    for (int guard = 0; guard < 16 && child_at + 6 <= root->end; ++guard) {
        auto child = version_node(v, child_at, root->end);
        if (!child || child->end <= child_at) break;
        if (child->key == "StringFileInfo") read_string_file_info(v, *child, info);
        child_at = align4(child->end);
    }
}

void read_resources(const Image& image, std::uint32_t rva, PeInfo& info) {
    auto types = directory_entries(image, rva, 0);
    if (!types) {
        info.warnings.push_back("resource directory lies outside the file");
        return;
    }
    for (const auto& type : *types) {
        if ((type.name & 0x80000000u) || type.name != rt_version || !type.is_directory()) continue;
        auto names = directory_entries(image, rva, type.offset());
        if (!names) break;
        for (const auto& name : *names) {
            if (!name.is_directory()) continue;
            auto languages = directory_entries(image, rva, name.offset());
            if (!languages) continue;
            for (const auto& language : *languages) {
                if (language.is_directory()) continue;
                const std::uint64_t at = static_cast<std::uint64_t>(rva) + language.offset();
                if (at > 0xffffffffu) continue;
                auto data_entry = image.read(static_cast<std::uint32_t>(at), 16);
                if (!data_entry) continue;
                ByteView d(data_entry->data(), data_entry->size());
                const std::uint32_t data_rva = *d.le32(0);
                const std::uint32_t data_size = std::min(*d.le32(4), max_version_resource);
                auto data = image.read(data_rva, data_size);
                if (!data) {
                    info.warnings.push_back("version resource lies outside the file");
                    return;
                }
                read_version_resource(ByteView(data->data(), data->size()), info);
                return; // the first version resource is the one Windows shows
            }
        }
    }
}

} // namespace

std::string FourPartVersion::str() const {
    return std::to_string(parts[0]) + "." + std::to_string(parts[1]) + "." +
           std::to_string(parts[2]) + "." + std::to_string(parts[3]);
}

std::string pe_machine_name(std::uint16_t machine) {
    switch (machine) {
    case pe::machine_i386:
        return "x86";
    case pe::machine_amd64:
        return "x64";
    case pe::machine_arm64:
        return "arm64";
    case pe::machine_armnt:
        return "arm";
    default:
        return "machine 0x" + [&] {
            static const char* digits = "0123456789abcdef";
            std::string s;
            for (int shift = 12; shift >= 0; shift -= 4)
                s.push_back(digits[(machine >> shift) & 0xf]);
            return s;
        }();
    }
}

std::string PeInfo::machine_name() const {
    return pe_machine_name(machine);
}

bool looks_like_pe(ByteView bytes) {
    return bytes.starts_with(0, "MZ", 2);
}

PeReadResult read_pe(const ByteSource& src) {
    PeReadResult result;
    auto dos = src.read_up_to(0, 64);
    if (!dos || dos->size() < 64 || !looks_like_pe(ByteView(dos->data(), dos->size()))) {
        result.error = "not a PE file (no MZ header)";
        return result;
    }
    const std::uint32_t pe_offset = *ByteView(dos->data(), dos->size()).le32(0x3c);
    auto coff_bytes = src.read(pe_offset, 24);
    if (!coff_bytes) {
        result.error = "PE header offset " + std::to_string(pe_offset) + " lies outside the file";
        return result;
    }
    ByteView coff(coff_bytes->data(), coff_bytes->size());
    if (!coff.starts_with(0, "PE\0\0", 4)) {
        result.error = "no PE signature (an MS-DOS program?)";
        return result;
    }
    PeInfo info;
    info.machine = *coff.le16(4);
    const std::uint16_t section_count = *coff.le16(6);
    const std::uint16_t optional_size = *coff.le16(20);
    const std::uint16_t characteristics = *coff.le16(22);
    info.is_dll = (characteristics & 0x2000) != 0;

    const std::uint64_t optional_at = static_cast<std::uint64_t>(pe_offset) + 24;
    auto opt_bytes = src.read(optional_at, optional_size);
    if (!opt_bytes || optional_size < 2) {
        result.error = "optional header is missing or truncated";
        return result;
    }
    ByteView opt(opt_bytes->data(), opt_bytes->size());
    const std::uint16_t magic = *opt.le16(0);
    std::uint64_t image_base = 0;
    std::uint64_t directories_at = 0;
    std::uint32_t directory_count = 0;
    std::uint32_t header_size = 0;
    if (magic == 0x10b || magic == 0x20b) {
        info.pe32_plus = magic == 0x20b;
        const std::uint64_t count_at = info.pe32_plus ? 108 : 92;
        auto base = info.pe32_plus ? opt.le64(24) : [&]() -> std::optional<std::uint64_t> {
            auto b = opt.le32(28);
            if (!b) return std::nullopt;
            return *b;
        }();
        auto headers = opt.le32(60);
        auto subsystem = opt.le16(68);
        auto count = opt.le32(count_at);
        if (!base || !headers || !subsystem || !count) {
            result.error = "optional header is truncated";
            return result;
        }
        image_base = *base;
        header_size = *headers;
        info.subsystem = *subsystem;
        directories_at = count_at + 4;
        directory_count = std::min<std::uint32_t>(*count, 16);
    } else {
        result.error = "unknown optional header magic " + std::to_string(magic);
        return result;
    }

    auto directory = [&](std::uint32_t index) -> std::pair<std::uint32_t, std::uint32_t> {
        if (index >= directory_count) return {0, 0};
        auto r = opt.le32(directories_at + index * 8ull);
        auto s = opt.le32(directories_at + index * 8ull + 4);
        if (!r || !s) return {0, 0};
        return {*r, *s};
    };

    if (section_count > max_sections) {
        result.error = "too many sections (" + std::to_string(section_count) + ")";
        return result;
    }
    std::vector<SectionEntry> sections;
    auto table = src.read(optional_at + optional_size, section_count * 40ull);
    if (!table) {
        result.error = "section table lies outside the file";
        return result;
    }
    ByteView st(table->data(), table->size());
    for (std::size_t i = 0; i < section_count; ++i) {
        SectionEntry s;
        s.virtual_size = *st.le32(i * 40 + 8);
        s.virtual_address = *st.le32(i * 40 + 12);
        s.raw_size = *st.le32(i * 40 + 16);
        s.raw_offset = *st.le32(i * 40 + 20);
        sections.push_back(s);
        const auto* name = reinterpret_cast<const char*>(table->data() + i * 40);
        info.sections.push_back({std::string(name, strnlen(name, 8)), s.raw_offset, s.raw_size});
    }
    Image image(src, std::move(sections), header_size);

    if (auto [rva, size] = directory(dir_import); rva != 0) read_imports(image, rva, size, info);
    if (auto [rva, size] = directory(dir_delay_import); rva != 0 && size != 0)
        read_delay_imports(image, rva, image_base, info);
    if (auto [rva, size] = directory(dir_resource); rva != 0 && size != 0)
        read_resources(image, rva, info);

    result.info = std::move(info);
    return result;
}

PeReadResult read_pe(ByteView bytes) {
    return read_pe(MemorySource(bytes));
}

PeReadResult read_pe_file(const std::string& path) {
    auto src = FileSource::open(path);
    if (!src) {
        PeReadResult r;
        r.error = path + ": cannot open the file";
        return r;
    }
    auto r = read_pe(*src);
    if (!r) r.error = path + ": " + r.error;
    return r;
}

} // namespace cvm::binary
