#include "core/program_trust.h"

#include <cstdio>
#include <mutex>
#include <set>
#include <system_error>

#include "core/trust.h"
#include "platform/platform.h"

namespace cvm {

namespace fs = std::filesystem;

namespace {

// "" when `p` is trusted or missing; else "<prefix><p> is <words>".
std::string doubt_at(const fs::path& p, const std::string& prefix) {
    if (p.empty()) return {};
    auto meta = platform::file_meta(p);
    if (!meta) return {};
    Doubt d = doubt_of(*meta);
    if (d == Doubt::None) return {};
    return prefix + p.u8string() + " is " + doubt_words(d, *meta);
}

} // namespace

std::string program_doubt(const fs::path& program) {
    // The folder it is found in: whoever may change it could replace the program.
    if (std::string why = doubt_at(program.parent_path(), "its folder "); !why.empty()) return why;
    // Each folder a link leads through, as check_entry_file_trusted's link chain.
    fs::path p = program;
    for (int hop = 0; hop < 40; ++hop) {
        bool link = false;
        if (!platform::link_meta(p, link) || !link) break;
        std::error_code ec;
        fs::path target = fs::read_symlink(p, ec);
        if (ec) break;
        fs::path next = target.is_absolute() ? target : p.parent_path() / target;
        if (std::string why = doubt_at(next.parent_path(), "a folder its link leads through, ");
            !why.empty())
            return why;
        p = next;
    }
    // The program itself (links followed).
    auto meta = platform::file_meta(program);
    if (!meta) return {};
    Doubt d = doubt_of(*meta);
    if (d == Doubt::None) return {};
    return "it is " + doubt_words(d, *meta);
}

bool trusted_program(const fs::path& program, const std::string& what) {
    std::string why = program_doubt(program);
    if (why.empty()) return true;
    static std::mutex lock;
    static std::set<std::string> said;
    std::lock_guard<std::mutex> hold(lock);
    if (said.insert(program.u8string()).second) {
        std::string line = "cvm: note: skipped " + program.u8string() +
                           (what.empty() ? std::string() : " (" + what + ")") + ": " + why +
                           ", so another user could change it\n";
        std::fputs(line.c_str(), stderr);
    }
    return false;
}

fs::path find_trusted_program(const std::string& name, const std::string& path_list,
                              const std::string& what) {
    // Each folder in turn: an untrusted match does not hide a trusted one further on.
    const char sep = platform::path_list_separator();
    size_t start = 0;
    while (start <= path_list.size()) {
        size_t end = path_list.find(sep, start);
        if (end == std::string::npos) end = path_list.size();
        std::string dir = path_list.substr(start, end - start);
        start = end + 1;
        if (dir.empty()) continue;
        fs::path found = platform::find_program(name, dir);
        if (found.empty()) continue;
        if (trusted_program(found, what.empty() ? name + " on PATH" : what)) return found;
    }
    return {};
}

} // namespace cvm
