#include "spec/spec.h"

#include <algorithm>
#include <cstdio>

namespace cvm {

std::string Version::str() const {
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) {
        if (i) out.push_back('.');
        out += std::to_string(parts[i]);
    }
    return out;
}

bool Version::has_prefix(const Version& prefix) const {
    if (prefix.parts.size() > parts.size()) return false;
    for (size_t i = 0; i < prefix.parts.size(); ++i)
        if (parts[i] != prefix.parts[i]) return false;
    return true;
}

size_t parse_version_parts(std::string_view text, unsigned* parts, size_t max_parts) {
    size_t count = 0;
    size_t i = 0;
    while (true) {
        size_t start = i;
        unsigned long value = 0;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
            value = value * 10 + static_cast<unsigned>(text[i] - '0');
            ++i;
            if (i - start > 9) return 0;
        }
        if (i == start || count == max_parts) return 0;
        parts[count++] = static_cast<unsigned>(value);
        if (i == text.size()) return count;
        if (text[i] != '.') return 0;
        ++i;
    }
}

std::optional<Version> parse_version(std::string_view text, size_t min_parts, size_t max_parts) {
    unsigned parts[kMaxVersionParts];
    size_t n = parse_version_parts(text, parts, std::min(max_parts, kMaxVersionParts));
    if (n == 0 || n < min_parts) return std::nullopt;
    return Version{std::vector<unsigned>(parts, parts + n)};
}

std::string CudnnId::str() const { return version.str() + "-cuda" + cuda.str(); }

bool CudnnId::serves(const Version& toolkit) const {
    if (cuda.parts.empty()) return false;
    if (toolkit.major() != cuda.major()) return false;
    return cuda.parts.size() < 2 || toolkit.minor() == cuda.minor();
}

// "VERSION-cudaX[.Y]": the version (min_parts to max_parts numbers) and the CUDA of a build.
static std::optional<std::pair<Version, Version>>
parse_build_id(std::string_view text, size_t min_parts, size_t max_parts) {
    size_t dash = text.find("-cuda");
    if (dash == std::string_view::npos) return std::nullopt;
    auto version = parse_version(text.substr(0, dash), min_parts, max_parts);
    auto cuda = parse_version(text.substr(dash + 5), 1, 2);
    if (!version || !cuda) return std::nullopt;
    return std::pair{*version, *cuda};
}

std::optional<CudnnId> parse_cudnn_id(std::string_view text) {
    auto id = parse_build_id(text, 1, 4);
    if (!id) return std::nullopt;
    return CudnnId{id->first, id->second};
}

std::optional<Version> parse_toolkit_id(std::string_view text) { return parse_version(text, 3, 3); }

std::string toolkit_name_problem(std::string_view text) {
    auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
    auto digit = [](char c) { return c >= '0' && c <= '9'; };
    if (text.empty() || !letter(text.front())) return "a name starts with a letter";
    if (text.size() > 64) return "a name is at most 64 characters";
    for (char c : text)
        if (!letter(c) && !digit(c) && c != '.' && c != '_' && c != '-')
            return "a name holds only letters, digits, '.', '_' and '-'";
    if (text.back() == '.' || text.back() == '-') return "a name does not end in '.' or '-'";
    if (text.find("..") != std::string_view::npos) return "a name holds no '..'";
    std::string lower;
    for (char c : text) lower.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
    if (lower.rfind("nccl", 0) == 0) return "a name starting with 'nccl' would read as an NCCL";
    for (const char* word : {"system", "latest", "cuda", "cudnn"})
        if (lower == word) return std::string("'") + word + "' is a word cvm reads itself";
    // Windows cannot hold a folder of a device's name (CON, NUL, COM1, LPT1.txt...).
    std::string stem = lower.substr(0, lower.find('.'));
    for (const char* device : {"con", "prn", "aux", "nul"})
        if (stem == device) return "'" + stem + "' is a device's name on Windows";
    if (stem.size() == 4 && (stem.rfind("com", 0) == 0 || stem.rfind("lpt", 0) == 0) && digit(stem[3]))
        return "'" + stem + "' is a device's name on Windows";
    return {};
}

std::string NcclId::str() const {
    return version.str() + "-cuda" + cuda.str();
}

bool NcclId::serves(const Version& toolkit) const {
    return !cuda.parts.empty() && toolkit.major() == cuda.major();
}

std::optional<NcclId> parse_nccl_id(std::string_view text) {
    auto id = parse_build_id(text, 3, 3);
    if (!id) return std::nullopt;
    return NcclId{id->first, id->second};
}

std::string Spec::str() const {
    if (system) return "system";
    std::string out = name.empty() ? cuda.str() : name;
    if (cudnn) {
        out += "+" + cudnn->str();
        if (cudnn_cuda) out += "-cuda" + cudnn_cuda->str();
    }
    if (nccl) {
        out += "+nccl" + nccl->str();
        if (nccl_cuda) out += "-cuda" + nccl_cuda->str();
    }
    return out;
}

std::string printable(std::string_view text) {
    std::string out;
    for (size_t i = 0; i < text.size() && out.size() < 80; ++i) {
        unsigned char c = static_cast<unsigned char>(text[i]);
        if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out.push_back(static_cast<char>(c));
        }
    }
    if (out.size() >= 80) out += "...";
    return out;
}

static std::string describe_bad_character(std::string_view text) {
    for (char ch : text) {
        unsigned char c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c == 0x7f) return "a control character";
        if (c == '/' || c == '\\') return "a path separator";
        if (c == ' ' || c == '\t') return "a space";
        if (c == '"' || c == '\'' || c == '`') return "a quote";
        if (std::string_view(";&|$<>()*?!{}[]%^~#=,").find(ch) != std::string_view::npos)
            return std::string("the character '") + ch + "'";
    }
    if (text.find("..") != std::string_view::npos) return "'..'";
    return "";
}

Spec parse_spec(std::string_view text) {
    Spec spec;
    if (text == "system") {
        spec.system = true;
        return spec;
    }
    // `unquoted_why` stands in for `why` in the reason, which is shown where the text may not be
    // (a version file that is a link): it must not quote any of the text.
    auto fail = [&](const std::string& why, const std::string& unquoted_why = "") -> SpecError {
        const std::string expected =
            "); expected CUDA[+CUDNN][+ncclVERSION] such as 11.2, 12.4.1+9, 11.2+8.1.0.77 or "
            "12.4+9.1+nccl2.21, or 'system'";
        return SpecError("'" + printable(text) + "' is not a version spec (" + why + expected,
                         "not a version spec (" + (unquoted_why.empty() ? why : unquoted_why) +
                             expected);
    };
    if (text.empty()) throw fail("it is empty");
    if (std::string bad = describe_bad_character(text); !bad.empty())
        throw fail("it contains " + bad, "it contains a character a spec cannot hold");
    size_t plus = text.find('+');
    std::string_view cuda_part = text.substr(0, plus);
    if (!cuda_part.empty() && !(cuda_part.front() >= '0' && cuda_part.front() <= '9')) {
        // A toolkit registered under a name (cvm import DIR --as NAME).
        if (std::string why = toolkit_name_problem(cuda_part); !why.empty())
            throw fail("the CUDA part must be 1 to 3 numbers or a toolkit's name: " + why,
                       "the CUDA part is neither 1 to 3 numbers nor a toolkit's name");
        spec.name = std::string(cuda_part);
    } else {
        auto cuda = parse_version(cuda_part, 1, 3);
        if (!cuda) throw fail("the CUDA part must be 1 to 3 numbers");
        spec.cuda = *cuda;
    }
    // The parts after the toolkit: a cuDNN first, an NCCL ("nccl" and its version) last.
    while (plus != std::string_view::npos) {
        size_t next = text.find('+', plus + 1);
        std::string_view part =
            text.substr(plus + 1, next == std::string_view::npos ? next : next - plus - 1);
        plus = next;
        const bool is_nccl = part.substr(0, 4) == "nccl";
        if (is_nccl) part.remove_prefix(4);
        size_t dash = part.find("-cuda");
        std::optional<Version> variant;
        if (dash != std::string_view::npos) {
            variant = parse_version(part.substr(dash + 5), 1, 2);
            if (!variant)
                throw fail(std::string("the ") + (is_nccl ? "NCCL" : "cuDNN") +
                           " build's CUDA must be 1 or 2 numbers");
        }
        if (is_nccl) {
            if (spec.nccl) throw fail("it names NCCL twice");
            auto nccl = parse_version(part.substr(0, dash), 1, 3);
            if (!nccl) throw fail("the NCCL part must be 'nccl' and 1 to 3 numbers, e.g. nccl2.21");
            spec.nccl = *nccl;
            spec.nccl_cuda = variant;
            continue;
        }
        if (spec.nccl) throw fail("the cuDNN part comes before the NCCL part");
        if (spec.cudnn) throw fail("it names cuDNN twice; NCCL is written +ncclVERSION");
        auto cudnn = parse_version(part.substr(0, dash), 1, 4);
        if (!cudnn) throw fail("the cuDNN part must be 1 to 4 numbers");
        spec.cudnn = *cudnn;
        spec.cudnn_cuda = variant;
    }
    return spec;
}

} // namespace cvm
