#include "compat/nccl_checks.h"

#include "binary/nccl_version.h"

#include <filesystem>
#include <set>

namespace cvm::compat {

namespace {

using doctor::Finding;
using doctor::LibraryLoad;
using doctor::Severity;

struct NcclFileRelease {
    std::string version; // "2.28.3"; empty when the file does not say
    std::string cuda;    // "13.0"; empty when the file does not say
};

NcclFileRelease nccl_release_of(const std::string& file) {
    NcclFileRelease r;
    if (auto b = binary::read_nccl_banner_file(file)) {
        r.version = b->version_text();
        r.cuda = b->cuda_text();
    }
    return r;
}

std::string mib(std::uint64_t bytes) {
    return std::to_string(bytes >> 20) + " MiB";
}

std::string who(const LibraryLoad& l) {
    return l.scenario == "current" ? "a program started in this shell"
                                   : "a program run through cvm";
}

std::string dpkg_hint(const std::string& file) {
    return "remove or replace the package that installed " + file + " (`dpkg -S " + file +
           "` names it; `rpm -qf` on RPM systems)";
}

unsigned major_of(const std::string& version) {
    auto v = parse_version(version, 1, 3);
    return v ? v->major() : 0;
}

} // namespace

std::optional<std::uint64_t> file_system_bytes(const std::string& dir) {
    std::error_code ec;
    auto space = std::filesystem::space(std::filesystem::u8path(dir), ec);
    if (ec || space.capacity == 0 || space.capacity == static_cast<std::uintmax_t>(-1))
        return std::nullopt;
    return static_cast<std::uint64_t>(space.capacity);
}

std::vector<Finding> nccl_findings(doctor::DoctorReport& report, const NcclMachine& machine) {
    std::vector<Finding> out;
    if (report.os != platform::Os::Linux) return out; // NVIDIA publishes no NCCL for Windows
    std::set<std::string> said;
    auto add = [&](Severity s, const std::string& code, const std::string& message,
                   const std::string& fix) {
        if (said.insert(code + message).second) out.push_back({s, code, message, fix});
    };

    // The libnccl.so.2 each scenario loads, with its real release; copies of other releases it
    // hides.
    const LibraryLoad* current = nullptr;
    const LibraryLoad* selected = nullptr;
    std::map<std::string, NcclFileRelease> releases; // file -> release
    auto release = [&](const std::string& file) -> const NcclFileRelease& {
        auto it = releases.find(file);
        if (it == releases.end()) it = releases.emplace(file, nccl_release_of(file)).first;
        return it->second;
    };
    for (auto& l : report.libraries) {
        if (l.family != "nccl" || !l.path || l.failure) continue;
        const NcclFileRelease& mine = release(l.real_path.value_or(*l.path));
        if (!mine.version.empty()) l.version = mine.version;
        (l.scenario == "current" ? current : selected) = &l;
        std::string others;
        std::string fix_files;
        for (const auto& s : l.shadowed) {
            const NcclFileRelease& theirs = release(s);
            if (theirs.version.empty() || theirs.version == mine.version) continue;
            others += (others.empty() ? "" : ", ") + s + " (NCCL " + theirs.version + ")";
        }
        if (others.empty()) continue;
        add(Severity::warning, "nccl-shadowed",
            who(l) + " loads libnccl.so.2 from " + *l.path + " (NCCL " +
                (mine.version.empty() ? std::string("of unknown release") : mine.version) + ", " +
                l.mechanism + ") while other releases are on its search path: " + others +
                ". Two releases on one machine end up in one process (a library linked against "
                "one, "
                "loaded beside the other) and fail with undefined symbols such as ncclCommRegister",
            "keep one NCCL: select it with `cvm use CUDA+ncclVERSION`, or " + dpkg_hint(*l.path));
    }

    // PyTorch's own NCCL against the one programs load.
    if (report.python)
        for (const auto& f : report.python->frameworks) {
            if (f.name != "pytorch" || !f.own_nccl_library) continue;
            std::string version =
                machine.torch_runtime_nccl.value_or(f.own_nccl_version.value_or(""));
            std::string how =
                machine.torch_runtime_nccl ? "torch.cuda.nccl.version()" : "its library's own text";
            const std::string torch =
                "PyTorch " + (f.version.empty() ? std::string("(version unknown)") : f.version);
            add(Severity::note, "framework-own-nccl",
                torch + " brings its own NCCL" + (version.empty() ? std::string() : " " + version) +
                    " (" + *f.own_nccl_library + ", " + how +
                    "): the selected NCCL does not change what it loads",
                "");
            for (const LibraryLoad* l : {current, selected}) {
                if (!l || !l->version || version.empty() || *l->version == version) continue;
                std::string dir = f.own_nccl_library->substr(0, f.own_nccl_library->rfind('/'));
                std::string root = dir.substr(0, dir.rfind('/'));
                add(Severity::warning, "nccl-two-versions",
                    who(*l) + " loads NCCL " + *l->version + " (" + *l->path + ", " + l->mechanism +
                        "), but " + torch + " uses NCCL " + version + " (" + *f.own_nccl_library +
                        "): an extension or MPI program "
                        "linked against the first and loaded into PyTorch gets whichever "
                        "libnccl.so.2 came first, "
                        "and fails with undefined symbols (ncclCommRegister and friends) or hangs",
                    "build against PyTorch's NCCL: `cvm import " + root +
                        "` and `cvm use CUDA+nccl" + version + "`; or " + dpkg_hint(*l->path));
            }
        }

    // An NCCL built for another CUDA major than the toolkit.
    if (report.resolved) {
        const Entry& tk = report.resolved->toolkit;
        std::string what, cuda;
        if (report.resolved->nccl) {
            what = "the selected NCCL " + report.resolved->nccl->id + " (" +
                   report.resolved->nccl->path.u8string() + ")";
            cuda = report.resolved->nccl->cuda.str();
        } else if (selected) {
            const NcclFileRelease& r = release(selected->real_path.value_or(*selected->path));
            what = "the NCCL " + r.version + " a program run through cvm loads (" +
                   *selected->path + ")";
            cuda = r.cuda;
        }
        if (!cuda.empty() && major_of(cuda) != tk.version.major())
            add(Severity::warning, "nccl-cuda-mismatch",
                what + " was built for CUDA " + cuda + ", but the selected toolkit is CUDA " +
                    tk.version.str() +
                    ": code built with the toolkit and linked against it mixes two CUDA majors",
                "install an NCCL built for CUDA " + std::to_string(tk.version.major()) +
                    " (`cvm list --available nccl " + std::to_string(tk.version.major()) +
                    "`) and `cvm use " + tk.version.str() + "+ncclVERSION`");
    }

    // /dev/shm: NCCL's shared-memory transport keeps its buffers there.
    bool nccl_here = current || selected || (report.resolved && report.resolved->nccl);
    if (report.python)
        for (const auto& f : report.python->frameworks)
            nccl_here = nccl_here || f.own_nccl_library.has_value();
    if (nccl_here && machine.shm_bytes && *machine.shm_bytes < kNcclShmBytes)
        add(Severity::warning, "shm-too-small",
            "/dev/shm holds only " + mib(*machine.shm_bytes) +
                ": NCCL's shared-memory transport puts its buffers there, and with several GPUs or "
                "processes it "
                "fails with \"posix_fallocate failed\" (Docker gives containers 64 MB)",
            "give it at least 1 GiB: `docker run --shm-size=1g` (or `--ipc=host`); on a host, "
            "`mount -o "
            "remount,size=1G /dev/shm`");

    // Variables that switch NCCL's transports off.
    struct Switch {
        const char* name;
        const char* effect;
    };
    for (const Switch& s :
         {Switch{"NCCL_P2P_DISABLE",
                 "NCCL does not use NVLink or PCIe peer-to-peer between GPUs: their traffic goes "
                 "through host memory, several times slower"},
          Switch{"NCCL_SHM_DISABLE",
                 "NCCL does not use shared memory between processes on this machine: it goes "
                 "through the network stack instead"},
          Switch{"NCCL_IB_DISABLE",
                 "NCCL does not use InfiniBand or RoCE between machines: it falls back to TCP "
                 "sockets"}}) {
        auto it = machine.env.find(s.name);
        if (it == machine.env.end() || it->second.empty() || it->second == "0") continue;
        add(Severity::note, "nccl-transport-disabled",
            std::string(s.name) + "=" + it->second + " is set: " + s.effect,
            std::string("unset ") + s.name +
                " unless it works around a fault of this machine (`cvm probe --nccl` "
                "measures the difference)");
    }
    return out;
}

} // namespace cvm::compat
