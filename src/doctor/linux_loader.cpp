#include "linux_loader.h"

#include <cctype>
#include <set>

namespace cvm::doctor {

const char* to_string(LinuxMechanism m) {
    switch (m) {
    case LinuxMechanism::direct_path:
        return "path";
    case LinuxMechanism::rpath:
        return "DT_RPATH";
    case LinuxMechanism::ld_library_path:
        return "LD_LIBRARY_PATH";
    case LinuxMechanism::runpath:
        return "DT_RUNPATH";
    case LinuxMechanism::ld_cache:
        return "ld.so.cache";
    case LinuxMechanism::default_dir:
        return "default folder";
    }
    return "?";
}

const char* to_string(CandidateStatus s) {
    switch (s) {
    case CandidateStatus::not_found:
        return "not found";
    case CandidateStatus::incompatible:
        return "incompatible";
    case CandidateStatus::unreadable:
        return "unreadable";
    case CandidateStatus::ignored:
        return "ignored";
    case CandidateStatus::selected:
        return "selected";
    case CandidateStatus::shadowed:
        return "shadowed";
    case CandidateStatus::conditional:
        return "conditional";
    }
    return "?";
}

LinuxRequester linux_requester(const std::string& path, const binary::ElfInfo& info) {
    LinuxRequester r;
    r.path = path;
    r.rpath = info.rpath;
    r.runpath = info.runpath;
    r.nodeflib = info.nodeflib;
    return r;
}

std::vector<const LinuxCandidate*> LinuxSearchResult::shadowed() const {
    std::vector<const LinuxCandidate*> out;
    for (const auto& c : candidates)
        if (c.status == CandidateStatus::shadowed) out.push_back(&c);
    return out;
}

namespace {

// ld.so's _dl_is_dst: "$NAME" not followed by an identifier character, or "${NAME}".
std::size_t token_length(const std::string& s, std::size_t at, const std::string& name) {
    if (at < s.size() && s[at] == '{') {
        if (s.compare(at + 1, name.size(), name) == 0 && at + 1 + name.size() < s.size() &&
            s[at + 1 + name.size()] == '}')
            return name.size() + 2;
        return 0;
    }
    if (s.compare(at, name.size(), name) != 0) return 0;
    const std::size_t next = at + name.size();
    if (next < s.size() && (std::isalnum(static_cast<unsigned char>(s[next])) || s[next] == '_'))
        return 0;
    return name.size();
}

std::string normalize(const std::string& path) {
    std::string out;
    for (std::size_t i = 0; i < path.size(); ++i) {
        const char c = path[i];
        if (c == '/' && !out.empty() && out.back() == '/') continue;
        if (c == '.' && !out.empty() && out.back() == '/' &&
            (i + 1 == path.size() || path[i + 1] == '/')) {
            ++i; // drop "./"
            continue;
        }
        out.push_back(c);
    }
    while (out.size() > 1 && out.back() == '/')
        out.pop_back();
    return out;
}

enum class Probe { missing, loadable, incompatible, unreadable };

struct ProbeResult {
    Probe probe = Probe::missing;
    std::string detail;
};

std::string abi_text(const binary::ElfInfo& e) {
    return std::to_string(e.bits) + "-bit " + (e.endian == binary::Endian::little ? "LE " : "BE ") +
           e.machine_name();
}

ProbeResult probe_file(const std::string& path, const LinuxSearchConfig& config,
                       const FileSystemView& fs) {
    ProbeResult r;
    if (!fs.is_file(path)) return r;
    auto src = fs.open(path);
    if (!src) {
        r.probe = Probe::unreadable;
        r.detail = "cannot be opened";
        return r;
    }
    auto elf = binary::read_elf(*src);
    if (!elf) {
        r.probe = Probe::unreadable;
        r.detail = elf.error;
        return r;
    }
    if (config.abi) {
        const binary::ElfInfo& want = *config.abi;
        // ld.so skips another class or machine silently but stops at another byte order.
        if (elf.info->endian != want.endian) {
            r.probe = Probe::unreadable;
            r.detail = "byte order differs from the process (" + abi_text(*elf.info) + ")";
            return r;
        }
        if (elf.info->bits != want.bits || elf.info->machine != want.machine) {
            r.probe = Probe::incompatible;
            r.detail = abi_text(*elf.info) + ", the process is " + abi_text(want);
            return r;
        }
    }
    r.probe = Probe::loadable;
    return r;
}

class LinuxSearch {
public:
    LinuxSearch(const std::string& name, const LinuxSearchConfig& config, const FileSystemView& fs)
        : name_(name), config_(config), fs_(fs) {
        result_.name = name;
    }

    // Adds the candidate `dir`/name (a relative folder is taken from the current folder).
    void add_dir(const std::string& dir, LinuxMechanism mechanism, const std::string& origin) {
        std::string base = dir;
        if (base.empty() || base[0] != '/')
            base = base.empty() ? config_.current_dir : path_join(config_.current_dir, base);
        add_path(normalize(path_join(base, name_)), mechanism, origin);
    }

    void add_path(const std::string& path, LinuxMechanism mechanism, const std::string& origin,
                  std::optional<CandidateStatus> forced = std::nullopt,
                  const std::string& forced_detail = "") {
        if (!seen_.insert(path).second) return;
        LinuxCandidate c;
        c.path = path;
        c.mechanism = mechanism;
        c.origin = origin;
        if (forced) {
            c.status = *forced;
            c.detail = forced_detail;
            if (fs_.is_file(path)) c.real_path = fs_.real_path(path);
            result_.candidates.push_back(std::move(c));
            return;
        }
        const ProbeResult p = probe_file(path, config_, fs_);
        c.detail = p.detail;
        if (p.probe != Probe::missing) c.real_path = fs_.real_path(path);
        const bool decided = result_.winner || result_.failed_at;
        switch (p.probe) {
        case Probe::missing:
            c.status = CandidateStatus::not_found;
            break;
        case Probe::incompatible:
            c.status = CandidateStatus::incompatible;
            break;
        case Probe::unreadable:
            c.status = decided ? CandidateStatus::shadowed : CandidateStatus::unreadable;
            if (!decided) result_.failed_at = result_.candidates.size();
            break;
        case Probe::loadable:
            c.status = decided ? CandidateStatus::shadowed : CandidateStatus::selected;
            if (!decided) result_.winner = result_.candidates.size();
            break;
        }
        result_.candidates.push_back(std::move(c));
    }

    void add_entries(const std::string& list, const std::string& origin_dir,
                     LinuxMechanism mechanism, const std::string& origin, bool semicolons) {
        for (const auto& entry : binary::split_search_path(list, semicolons)) {
            auto dir = expand_dynamic_string_tokens(entry, origin_dir, config_.lib_token,
                                                    config_.platform_token);
            if (!dir) continue;
            add_dir(*dir, mechanism, origin);
        }
    }

    LinuxSearchResult run() {
        if (name_.find('/') != std::string::npos) {
            std::string path = name_;
            if (path[0] != '/') path = path_join(config_.current_dir, path);
            add_path(normalize(path), LinuxMechanism::direct_path, "the name contains a '/'");
            return std::move(result_);
        }
        const LinuxRequester* first = config_.requesters.empty() ? nullptr : &config_.requesters[0];

        // DT_RPATH of the chain, unless the requesting object has DT_RUNPATH.
        if (!first || !first->runpath) {
            for (const auto& r : config_.requesters) {
                if (r.runpath || !r.rpath)
                    continue; // an object with DT_RUNPATH has its DT_RPATH ignored
                add_entries(*r.rpath, path_dirname(r.path), LinuxMechanism::rpath,
                            "DT_RPATH of " + r.path, false);
            }
        }
        if (config_.ld_library_path && !config_.ld_library_path->empty() && !config_.secure) {
            const std::string main_dir = config_.requesters.empty()
                                             ? std::string()
                                             : path_dirname(config_.requesters.back().path);
            add_entries(*config_.ld_library_path, main_dir, LinuxMechanism::ld_library_path,
                        "LD_LIBRARY_PATH", true);
        }
        if (first && first->runpath)
            add_entries(*first->runpath, path_dirname(first->path), LinuxMechanism::runpath,
                        "DT_RUNPATH of " + first->path, false);

        const bool nodeflib = first && first->nodeflib;
        if (!nodeflib && config_.cache) {
            bool tried = false;
            for (const binary::LdCacheEntry* e : config_.cache->find(name_)) {
                const std::string origin = config_.cache_path + " (" + e->abi_name() + ")";
                if (config_.abi && !e->matches(*config_.abi)) {
                    add_path(e->path, LinuxMechanism::ld_cache, origin,
                             CandidateStatus::incompatible, "cache entry for another ABI");
                } else if (e->hwcap != 0) {
                    add_path(e->path, LinuxMechanism::ld_cache, origin,
                             CandidateStatus::conditional,
                             "glibc-hwcaps entry, preferred on CPUs that support it");
                } else if (tried) {
                    const bool exists = fs_.is_file(e->path);
                    add_path(e->path, LinuxMechanism::ld_cache, origin,
                             exists ? CandidateStatus::ignored : CandidateStatus::not_found,
                             "ld.so uses only the first cache entry for a name");
                } else {
                    tried = true;
                    add_path(e->path, LinuxMechanism::ld_cache, origin);
                }
            }
        }
        if (!nodeflib)
            for (const auto& dir : config_.default_dirs)
                add_dir(dir, LinuxMechanism::default_dir, "system folder " + dir);
        return std::move(result_);
    }

private:
    const std::string& name_;
    const LinuxSearchConfig& config_;
    const FileSystemView& fs_;
    LinuxSearchResult result_;
    std::set<std::string> seen_;
};

} // namespace

std::optional<std::string> expand_dynamic_string_tokens(const std::string& entry,
                                                        const std::string& origin_dir,
                                                        const std::string& lib_token,
                                                        const std::string& platform_token) {
    std::string out;
    for (std::size_t i = 0; i < entry.size(); ++i) {
        if (entry[i] != '$') {
            out.push_back(entry[i]);
            continue;
        }
        const std::size_t at = i + 1;
        const std::string* value = nullptr;
        std::size_t length = 0;
        if ((length = token_length(entry, at, "ORIGIN")) != 0)
            value = &origin_dir;
        else if ((length = token_length(entry, at, "PLATFORM")) != 0)
            value = &platform_token;
        else if ((length = token_length(entry, at, "LIB")) != 0)
            value = &lib_token;
        if (!value) {
            out.push_back('$');
            continue;
        }
        if (value->empty()) return std::nullopt;
        out += *value;
        i = at + length - 1;
    }
    return out;
}

std::string multiarch_triplet(const binary::ElfInfo& abi) {
    switch (abi.machine) {
    case binary::elf::em_x86_64:
        return abi.bits == 64 ? "x86_64-linux-gnu" : "x86_64-linux-gnux32";
    case binary::elf::em_386:
        return "i386-linux-gnu";
    case binary::elf::em_aarch64:
        return "aarch64-linux-gnu";
    case binary::elf::em_ppc64:
        return abi.endian == binary::Endian::little ? "powerpc64le-linux-gnu"
                                                    : "powerpc64-linux-gnu";
    case binary::elf::em_s390:
        return abi.bits == 64 ? "s390x-linux-gnu" : "s390-linux-gnu";
    case binary::elf::em_arm:
        return "arm-linux-gnueabihf";
    case binary::elf::em_riscv:
        return abi.bits == 64 ? "riscv64-linux-gnu" : "";
    default:
        return "";
    }
}

std::vector<std::string> default_linux_library_dirs(const binary::ElfInfo& abi,
                                                    const FileSystemView& fs) {
    const std::string triplet = multiarch_triplet(abi);
    if (!triplet.empty() &&
        (fs.is_directory("/lib/" + triplet) || fs.is_directory("/usr/lib/" + triplet)))
        return {"/lib/" + triplet, "/usr/lib/" + triplet, "/lib", "/usr/lib"};
    if (abi.bits == 64) return {"/lib64", "/usr/lib64"};
    return {"/lib", "/usr/lib"};
}

LinuxSearchResult search_linux_library(const std::string& name, const LinuxSearchConfig& config,
                                       const FileSystemView& fs) {
    return LinuxSearch(name, config, fs).run();
}

} // namespace cvm::doctor
