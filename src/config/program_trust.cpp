#include "config/program_trust.h"

#include <cstdio>
#include <mutex>
#include <set>
#include <system_error>

#include "text/path_list.h"
#include "config/trust.h"
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
    // Each folder a link leads through, as for an entry's programs.
    for (const fs::path& folder : link_chain_folders(program))
        if (std::string why = doubt_at(folder, "a folder its link leads through, "); !why.empty())
            return why;
    // The program itself (links followed).
    auto meta = platform::file_meta(program);
    if (!meta) return {};
    Doubt d = doubt_of(*meta);
    if (d == Doubt::None) return {};
    return "it is " + doubt_words(d, *meta);
}

void note_untrusted(const fs::path& program, const std::string& what, const std::string& why) {
    static std::mutex lock;
    static std::set<std::string> said;
    std::lock_guard<std::mutex> hold(lock);
    if (!said.insert(program.u8string()).second) return;
    std::string line = "cvm: note: skipped " + program.u8string() +
                       (what.empty() ? std::string() : " (" + what + ")") + ": " + why +
                       ", so another user could change it\n";
    std::fputs(line.c_str(), stderr);
}

bool trusted_program(const fs::path& program, const std::string& what) {
    std::string why = program_doubt(program);
    if (why.empty()) return true;
    note_untrusted(program, what, why);
    return false;
}

fs::path find_trusted_program(const std::string& name, const std::string& path_list,
                              const std::string& what) {
    // Each folder in turn: an untrusted match does not hide a trusted one further on.
    for (const std::string& dir : split_path_list(path_list, platform::host_os())) {
        if (dir.empty()) continue;
        fs::path found = platform::find_program(name, dir);
        if (found.empty()) continue;
        if (trusted_program(found, what.empty() ? name + " on PATH" : what)) return found;
    }
    return {};
}

} // namespace cvm
