#include "compat/compiler_id.h"

#include <cctype>

namespace cvm::compat {

const char* to_string(CompilerKind k) {
    switch (k) {
    case CompilerKind::Gcc: return "gcc";
    case CompilerKind::Clang: return "clang";
    case CompilerKind::Msvc: return "msvc";
    }
    return "gcc";
}

unsigned msc_ver(const Version& v) {
    return v.major() * 100 + v.minor();
}

std::string visual_studio_of(unsigned msc) {
    if (msc >= 1950) return "2026";
    if (msc >= 1930) return "2022";
    if (msc >= 1920) return "2019";
    if (msc >= 1910) return "2017";
    if (msc == 1900) return "2015";
    if (msc == 1800) return "2013";
    if (msc == 1700) return "2012";
    return "";
}

std::string describe(const CompilerId& id) {
    if (id.kind != CompilerKind::Msvc) return std::string(to_string(id.kind)) + " " + id.version.str();
    std::string vs = visual_studio_of(msc_ver(id.version));
    return "MSVC " + std::to_string(id.version.major()) + "." + std::to_string(id.version.minor()) +
           (vs.empty() ? "" : " (Visual Studio " + vs + ")");
}

namespace {

// The first version-looking word (digits and dots, 2+ numbers) at or after `from`.
std::optional<Version> version_after(std::string_view text, size_t from) {
    for (size_t i = from; i < text.size(); ++i) {
        if (!std::isdigit(static_cast<unsigned char>(text[i]))) continue;
        if (i > 0 && (std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '.' ||
                      text[i - 1] == '-'))
            continue;
        size_t end = i;
        while (end < text.size() &&
               (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.'))
            ++end;
        std::string_view word = text.substr(i, end - i);
        while (!word.empty() && word.back() == '.') word.remove_suffix(1);
        if (auto v = parse_version(word, 2, 4)) return v;
        i = end;
    }
    return std::nullopt;
}

std::string_view first_line(std::string_view text) {
    size_t end = text.find_first_of("\r\n");
    return end == std::string_view::npos ? text : text.substr(0, end);
}

} // namespace

std::optional<CompilerId> parse_compiler_banner(std::string_view text) {
    // cl.exe: "Microsoft (R) C/C++ Optimizing Compiler Version 19.29.30133 for x64"
    if (size_t at = text.find("C/C++ Optimizing Compiler Version"); at != std::string_view::npos) {
        if (auto v = version_after(text, at)) return CompilerId{CompilerKind::Msvc, *v};
        return std::nullopt;
    }
    // clang: "Debian clang version 14.0.6", "clang version 17.0.0 (https://...)",
    // "Apple clang version 15.0.0 (clang-1500.0.40.1)"
    if (size_t at = text.find("clang version"); at != std::string_view::npos) {
        if (auto v = version_after(text, at + 13)) return CompilerId{CompilerKind::Clang, *v};
        return std::nullopt;
    }
    // gcc: "gcc (Debian 12.2.0-14) 12.2.0", "g++ (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0",
    // "x86_64-conda-linux-gnu-c++ (conda-forge gcc 12.3.0-3) 12.3.0". The version is the last
    // word of the first line; the copyright line names the Free Software Foundation.
    if (text.find("Free Software Foundation") == std::string_view::npos) return std::nullopt;
    std::string_view line = first_line(text);
    size_t space = line.find_last_of(' ');
    std::string_view last = space == std::string_view::npos ? line : line.substr(space + 1);
    if (auto v = parse_version(last, 2, 4)) return CompilerId{CompilerKind::Gcc, *v};
    if (auto v = version_after(line, line.find(')') == std::string_view::npos ? 0 : line.find(')')))
        return CompilerId{CompilerKind::Gcc, *v};
    return std::nullopt;
}

std::optional<Version> cl_version_of_toolset(std::string_view name) {
    auto v = parse_version(name, 2, 4);
    if (!v || v->major() != 14) return std::nullopt;
    Version out = *v;
    out.parts[0] = 19;
    return out;
}

} // namespace cvm::compat
