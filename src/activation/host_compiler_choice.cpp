#include "activation/host_compiler_choice.h"

#include <cstdio>

#include "config/program_trust.h"
#include "config/trust.h"
#include "platform/platform.h"

namespace cvm {

namespace fs = std::filesystem;

fs::path host_compiler_cache_file(const fs::path& root, const std::string& id) {
    if (id.empty() || id == "." || id == ".." || id.find_first_of("/\\:") != std::string::npos)
        return {};
    return root / "cache" / "host-compiler" / fs::u8path(id);
}

std::string format_host_compiler_choice(const HostCompilerChoice& c) {
    std::string out = c.ccbin.empty()
                          ? "via none\n"
                          : "ccbin " + c.ccbin + "\nvia " + (c.via_env ? "env" : "arg") + "\n";
    if (!c.why.empty()) out += "why " + c.why + "\n";
    if (!c.line.empty()) out += "line " + c.line + "\n";
    return out;
}

std::optional<HostCompilerChoice> parse_host_compiler_choice(std::string_view text) {
    HostCompilerChoice c;
    bool via = false, none = false;
    while (!text.empty()) {
        size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        size_t space = line.find(' ');
        if (space == std::string_view::npos) continue;
        std::string_view key = line.substr(0, space), value = line.substr(space + 1);
        if (key == "ccbin")
            c.ccbin = value;
        else if (key == "why")
            c.why = value;
        else if (key == "line")
            c.line = value;
        else if (key == "via") {
            if (value != "env" && value != "arg" && value != "none") return std::nullopt;
            c.via_env = value == "env";
            via = true;
            none = value == "none";
        }
    }
    if (!via || none != c.ccbin.empty()) return std::nullopt;
    return c;
}

std::optional<std::string> ccbin_in_args(const std::vector<std::string>& args) {
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        for (const char* name : {"-ccbin", "--compiler-bindir"}) {
            std::string n = name;
            if (a == n) return i + 1 < args.size() ? args[i + 1] : std::string();
            if (a.size() > n.size() && a.compare(0, n.size(), n) == 0 && a[n.size()] == '=')
                return a.substr(n.size() + 1);
        }
    }
    return std::nullopt;
}

std::vector<std::string> split_flag_words(std::string_view text) {
    std::vector<std::string> out;
    std::string word;
    bool in_word = false;
    char quote = 0;
    for (char c : text) {
        if (quote) {
            if (c == quote)
                quote = 0;
            else
                word += c;
        } else if (c == '"' || c == '\'') {
            quote = c;
            in_word = true;
        } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            if (in_word) out.push_back(word);
            word.clear();
            in_word = false;
        } else {
            word += c;
            in_word = true;
        }
    }
    if (in_word) out.push_back(word);
    return out;
}

bool user_chose_host_compiler(const std::vector<std::string>& args,
                              const std::optional<std::string>& prepend,
                              const std::optional<std::string>& append,
                              const std::optional<std::string>& nvcc_ccbin) {
    if (nvcc_ccbin && !nvcc_ccbin->empty()) return true;
    if (args.size() > 1 && ccbin_in_args(std::vector<std::string>(args.begin() + 1, args.end())))
        return true;
    for (const auto* flags : {&prepend, &append})
        if (*flags && ccbin_in_args(split_flag_words(**flags))) return true;
    return false;
}

HostCompiler handed_host_compiler(const fs::path& root, const std::string& toolkit_id) {
    auto mode = platform::get_env("CVM_HOST_COMPILER");
    if (mode && *mode == "off") return {};
    fs::path file = host_compiler_cache_file(root, toolkit_id);
    if (file.empty()) return {};
    // The file names a compiler that nvcc will run: only one the store's owner (or root, or a
    // trusted owner) wrote counts, as for every other file the shim reads.
    auto read = platform::read_file_checked(file.u8string(), 1 << 14);
    if (!read.text) return {};
    if (doubt_of(read.meta) != Doubt::None) {
        std::fprintf(
            stderr, "cvm: warning: %s\n",
            distrust_message("the host compiler choice", file, read.meta, doubt_of(read.meta))
                .c_str());
        return {};
    }
    auto choice = parse_host_compiler_choice(*read.text);
    if (!choice || choice->ccbin.empty() || !platform::exists(choice->ccbin)) return {};
    // Trusted when it was chosen; checked again now that nvcc is about to run it: a folder given
    // to another user since, or opened to everybody, hands nothing over.
    if (std::string why = program_doubt(fs::u8path(choice->ccbin)); !why.empty()) {
        // Said once a process (an activation asks for each view it makes).
        static std::string warned;
        if (warned != choice->ccbin) {
            warned = choice->ccbin;
            std::string line = "cvm: warning: the host compiler " + choice->ccbin +
                               " is not handed to nvcc: " + why +
                               ", so another user could change it; run `cvm rehash` once it is fixed\n";
            std::fputs(line.c_str(), stderr);
        }
        return {};
    }
    return {choice->ccbin, choice->via_env};
}

void add_ccbin_argument(const HostCompiler& handed, bool reads_env,
                        std::vector<std::string>& args) {
    if (reads_env) return;
    if (user_chose_host_compiler(args, platform::get_env("NVCC_PREPEND_FLAGS"),
                                 platform::get_env("NVCC_APPEND_FLAGS"), std::nullopt))
        return;
    std::string ccbin = handed.path;
    // This nvcc does not read NVCC_CCBIN: a value the user set there is their choice all the same.
    auto user = platform::get_env("NVCC_CCBIN");
    auto mark = platform::get_env(kHostCompilerMark);
    if (user && !user->empty() && (!mark || *user != *mark)) ccbin = *user;
    if (ccbin.empty()) return;
    args.insert(args.begin() + (args.empty() ? 0 : 1), {"-ccbin", ccbin});
}

} // namespace cvm
