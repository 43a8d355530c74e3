#include "layouts/cudnn_cuda_major.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <system_error>

#include "binary/byte_source.h"
#include "binary/elf_reader.h"
#include "binary/pe_reader.h"
#include "text/ascii.h"
#include "text/pattern.h"

namespace cvm {

namespace {

bool name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Read-only data is scanned in pieces this large, overlapping by more than any name is long.
constexpr std::uint64_t chunk_size = std::uint64_t(8) << 20;
constexpr std::uint64_t overlap = 64;
// No cuDNN library has read-only data near this; a larger section is not read past it.
constexpr std::uint64_t max_section = std::uint64_t(256) << 20;

// The names in `text` (raw bytes of a data section, or their UTF-16 code units narrowed) that
// stand for a CUDA library: a name starts at a non-name character and ends at one.
void names_in(std::string_view text, std::vector<std::string>& out) {
    const std::string low = ascii_lower(text);
    for (const char* anchor : {"cublas", "nvrtc", "cudart"}) {
        for (size_t at = low.find(anchor); at != std::string::npos; at = low.find(anchor, at + 1)) {
            size_t start = at >= 3 && low.compare(at - 3, 3, "lib") == 0 ? at - 3 : at;
            if (start > 0 && name_char(low[start - 1])) continue;
            size_t end = at;
            while (end < low.size() && (name_char(low[end]) || low[end] == '.'))
                ++end;
            while (end > start && low[end - 1] == '.')
                --end;
            std::string name(text.substr(start, end - start));
            if (cuda_major_of_library_name(name) &&
                std::find(out.begin(), out.end(), name) == out.end())
                out.push_back(std::move(name));
        }
    }
}

// UTF-16LE text narrowed to the code units below 0x80 (the rest become NUL), for one alignment.
std::string narrowed_utf16(const std::vector<std::uint8_t>& bytes, size_t first) {
    std::string out;
    out.reserve(bytes.size() / 2);
    for (size_t i = first; i + 1 < bytes.size(); i += 2)
        out.push_back(bytes[i + 1] == 0 && bytes[i] < 0x80 ? static_cast<char>(bytes[i]) : '\0');
    return out;
}

void scan_section(const binary::ByteSource& src, std::uint64_t offset, std::uint64_t size,
                  bool utf16, std::vector<std::string>& out) {
    size = std::min(size, max_section);
    for (std::uint64_t done = 0; done < size;) {
        const std::uint64_t length = std::min(chunk_size, size - done);
        auto bytes = src.read_up_to(offset + done, length);
        if (!bytes || bytes->empty()) return;
        names_in(std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()),
                 out);
        if (utf16)
            for (size_t first : {0, 1})
                names_in(narrowed_utf16(*bytes, first), out);
        if (done + length >= size || bytes->size() < length) return;
        done += length - overlap;
    }
}

void names_of_elf(const binary::ByteSource& src, std::vector<std::string>& out) {
    if (auto elf = binary::read_elf(src))
        for (const auto& n : elf.info->needed)
            if (cuda_major_of_library_name(n) && std::find(out.begin(), out.end(), n) == out.end())
                out.push_back(n);
    constexpr std::uint32_t sht_progbits = 1;
    for (const auto& s : binary::read_elf_sections(src))
        if (s.type == sht_progbits && (s.name == ".rodata" || s.name == ".lrodata"))
            scan_section(src, s.offset, s.size, false, out);
}

void names_of_pe(const binary::ByteSource& src, std::vector<std::string>& out) {
    auto pe = binary::read_pe(src);
    if (!pe) return;
    for (const auto* list : {&pe.info->imports, &pe.info->delay_imports})
        for (const auto& n : *list)
            if (cuda_major_of_library_name(n) && std::find(out.begin(), out.end(), n) == out.end())
                out.push_back(n);
    for (const auto& s : pe.info->sections)
        if (s.name == ".rdata") scan_section(src, s.raw_offset, s.raw_size, true, out);
}

} // namespace

std::optional<unsigned> cuda_major_of_library_name(std::string_view name) {
    static const Pattern so(R"(^lib(cublaslt|cublas|nvrtc|cudart)\.so\.([0-9]{1,3})(\.[0-9]+)*$)");
    static const Pattern dll(R"(^(cublaslt64|cublas64|cudart64|nvrtc64)_([0-9]{2,3})(_0)?\.dll$)");
    const std::string low = ascii_lower(name);
    unsigned major = 0;
    if (auto m = so.match(low)) {
        major = static_cast<unsigned>(std::stoul((*m)[2]));
    } else if ((m = dll.match(low))) {
        // cublas64_100.dll, cudart64_110.dll, nvrtc64_120_0.dll: major and minor; cublas64_11.dll:
        // the major; CUDA 9's cudart64_90.dll .. cudart64_92.dll: 9 and the minor.
        const std::string digits = (*m)[2];
        const unsigned n = static_cast<unsigned>(std::stoul(digits));
        major = digits.size() == 3 ? n / 10 : digits[0] == '9' ? 9 : n;
    } else {
        return std::nullopt;
    }
    if (major < 7 || major > 99) return std::nullopt;
    return major;
}

std::vector<std::string> cuda_libraries_named_by(const fs::path& file) {
    std::vector<std::string> out;
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) return out; // a FIFO or a device would block or never end
    auto src = binary::FileSource::open(file.u8string());
    if (!src) return out;
    auto head = src->read_up_to(0, 4);
    if (!head) return out;
    binary::ByteView v(head->data(), head->size());
    if (binary::looks_like_elf(v))
        names_of_elf(*src, out);
    else if (binary::looks_like_pe(v))
        names_of_pe(*src, out);
    return out;
}

std::string LibrariesCudaMajor::because() const {
    for (const auto& e : evidence)
        if (major && e.major == *major) return e.file.filename().u8string() + " names " + e.name;
    return "";
}

LibrariesCudaMajor cuda_major_of_libraries(const std::vector<fs::path>& files) {
    LibrariesCudaMajor out;
    std::set<fs::path> seen;
    std::map<unsigned, const NamedCudaLibrary*> first_of;
    for (const auto& f : files) {
        std::error_code ec;
        fs::path real = fs::canonical(f, ec);
        if (ec || !seen.insert(real).second) continue;
        for (auto& name : cuda_libraries_named_by(real))
            out.evidence.push_back({real, name, *cuda_major_of_library_name(name)});
    }
    for (const auto& e : out.evidence)
        first_of.emplace(e.major, &e);
    if (first_of.size() == 1) out.major = first_of.begin()->first;
    if (first_of.size() > 1) {
        for (const auto& [major, e] : first_of)
            out.disagreement += (out.disagreement.empty() ? "" : " but ") +
                                e->file.filename().u8string() + " names " + e->name;
    }
    return out;
}

std::vector<fs::path> cudnn_library_files(const fs::path& dir, unsigned major) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string n = it->path().filename().u8string();
        const std::string low = ascii_lower(n);
        bool wanted = false;
        if (low.rfind("libcudnn", 0) == 0) {
            size_t so = low.find(".so.");
            if (so != std::string::npos) {
                size_t dot = low.find('.', so + 4);
                std::string first =
                    low.substr(so + 4, dot == std::string::npos ? std::string::npos : dot - so - 4);
                wanted = !first.empty() && std::all_of(first.begin(), first.end(), [](char c) {
                    return c >= '0' && c <= '9';
                }) && (major == 0 || first == std::to_string(major));
            }
        } else if (low.rfind("cudnn", 0) == 0 && low.size() > 4 &&
                   low.compare(low.size() - 4, 4, ".dll") == 0) {
            wanted = true;
        }
        std::error_code e2;
        if (wanted && fs::is_regular_file(it->path(), e2)) out.push_back(it->path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace cvm
