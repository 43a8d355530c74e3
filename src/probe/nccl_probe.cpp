#include "nccl_probe.h"

#include "binary/nccl_version.h"
#include "nccl_api.h"
#include "runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

namespace cvm::probe {
namespace {

struct NcclApi {
    api::ncclGetVersion_t GetVersion = nullptr;
    api::ncclCommInitAll_t CommInitAll = nullptr;
    api::ncclCommDestroy_t CommDestroy = nullptr;
    api::ncclAllReduce_t AllReduce = nullptr;
    api::ncclGroupStart_t GroupStart = nullptr;
    api::ncclGroupEnd_t GroupEnd = nullptr;
    api::ncclGetErrorString_t GetErrorString = nullptr;
    api::ncclGetLastError_t GetLastError = nullptr;
};

// The values all-reduced: small integers, so every sum is exact in float whatever order NCCL
// adds in, and the result can be compared bit for bit. Rank r sends ((i + 7r) mod 61) - 30 at
// element i: different on every rank, and periodic, so one block of the expected sums (a whole
// number of periods long) stands for every block of the buffer.
constexpr std::size_t kPeriod = 61;
constexpr std::size_t kBlockFloats = kPeriod * (std::size_t(1) << 18); // about 61 MiB

float send_value(std::size_t i, int rank) {
    return static_cast<float>(static_cast<int>((i + 7u * static_cast<unsigned>(rank)) % kPeriod) -
                              30);
}

float expected_value(std::size_t i, int ranks) {
    float sum = 0;
    for (int r = 0; r < ranks; ++r)
        sum += send_value(i, r);
    return sum;
}

// One communicator over `ranks` GPUs with its streams and buffers; frees them all.
class AllReduceRun {
public:
    AllReduceRun(const Options& o, const CudartApi& rt, const NcclApi& nccl, Report& report)
        : o_(o), rt_(rt), nccl_(nccl), report_(report) {}
    ~AllReduceRun();
    AllReduceRun(const AllReduceRun&) = delete;
    AllReduceRun& operator=(const AllReduceRun&) = delete;

    void run(int ranks);

private:
    std::string cuda_failed(const std::string& call, int rank, int error) const {
        return call + " on GPU " + std::to_string(rank) + " returned " +
               cuda_error_text(rt_, error);
    }
    std::string nccl_failed(const char* call, int result) const;
    bool setup(std::size_t max_bytes);
    bool all_reduce(std::size_t count, int times);
    void check(std::size_t count, NcclSize& out);
    void topology();

    const Options& o_;
    const CudartApi& rt_;
    const NcclApi& nccl_;
    Report& report_;
    int ranks_ = 0;
    std::vector<api::ncclComm_t> comms_;
    std::vector<api::cudaStream> streams_;
    std::vector<void*> send_, receive_;
    float* host_ = nullptr; // one block: pinned when the runtime can, else from `owned_`
    bool pinned_ = false;
    std::vector<float> owned_;
    std::vector<float> expected_;
};

AllReduceRun::~AllReduceRun() {
    for (auto comm : comms_)
        if (comm) nccl_.CommDestroy(comm);
    for (int r = 0; r < ranks_; ++r) {
        if (rt_.SetDevice) rt_.SetDevice(r);
        if (r < static_cast<int>(send_.size()) && send_[static_cast<size_t>(r)])
            rt_.Free(send_[static_cast<size_t>(r)]);
        if (r < static_cast<int>(receive_.size()) && receive_[static_cast<size_t>(r)])
            rt_.Free(receive_[static_cast<size_t>(r)]);
        if (r < static_cast<int>(streams_.size()) && streams_[static_cast<size_t>(r)])
            rt_.StreamDestroy(streams_[static_cast<size_t>(r)]);
    }
    if (pinned_ && host_) rt_.FreeHost(host_);
}

std::string AllReduceRun::nccl_failed(const char* call, int result) const {
    std::string text = std::string(call) + " returned " + std::to_string(result);
    if (nccl_.GetErrorString)
        if (const char* name = nccl_.GetErrorString(result); name && *name)
            text += " (" + std::string(name) + ")";
    if (nccl_.GetLastError)
        if (const char* last = nccl_.GetLastError(nullptr); last && *last)
            text += ": " + std::string(last);
    return text;
}

void AllReduceRun::topology() {
    NcclReport& n = report_.nccl;
    for (int r = 0; r < ranks_; ++r) {
        char bus[64] = {};
        if (rt_.DeviceGetPCIBusId &&
            rt_.DeviceGetPCIBusId(bus, sizeof bus - 1, r) == api::kCudaSuccess)
            n.bus_ids.push_back(bus);
        else
            n.bus_ids.emplace_back();
    }
    n.peer_access.assign(static_cast<size_t>(ranks_),
                         std::vector<int>(static_cast<size_t>(ranks_), -1));
    for (int a = 0; a < ranks_; ++a)
        for (int b = 0; b < ranks_; ++b) {
            int can = 0;
            if (a != b && rt_.DeviceCanAccessPeer &&
                rt_.DeviceCanAccessPeer(&can, a, b) == api::kCudaSuccess)
                n.peer_access[static_cast<size_t>(a)][static_cast<size_t>(b)] = can ? 1 : 0;
        }
}

bool AllReduceRun::setup(std::size_t max_bytes) {
    const std::size_t count = max_bytes / sizeof(float);
    const std::size_t block = std::min(count, kBlockFloats);
    if (rt_.MallocHost && rt_.FreeHost &&
        rt_.MallocHost(reinterpret_cast<void**>(&host_), block * sizeof(float)) == 0)
        pinned_ = true;
    else {
        owned_.resize(block);
        host_ = owned_.data();
    }
    expected_.resize(block);
    for (std::size_t i = 0; i < block; ++i)
        expected_[i] = expected_value(i, ranks_);
    send_.assign(static_cast<size_t>(ranks_), nullptr);
    receive_.assign(static_cast<size_t>(ranks_), nullptr);
    streams_.assign(static_cast<size_t>(ranks_), nullptr);
    for (int r = 0; r < ranks_; ++r) {
        const auto ri = static_cast<size_t>(r);
        int e = rt_.SetDevice(r);
        if (e)
            return report_.add_problem(problem::kCudaError,
                                       "NCCL check: " + cuda_failed("cudaSetDevice", r, e)),
                   false;
        e = rt_.StreamCreate(&streams_[ri]);
        if (e)
            return report_.add_problem(problem::kCudaError,
                                       "NCCL check: " + cuda_failed("cudaStreamCreate", r, e)),
                   false;
        e = rt_.Malloc(&send_[ri], max_bytes);
        if (e == 0) e = rt_.Malloc(&receive_[ri], max_bytes);
        if (e)
            return report_.add_problem(
                       problem::kCudaError,
                       "NCCL check: " +
                           cuda_failed("cudaMalloc (2 x " + size_label(max_bytes) + ")", r, e) +
                           "; free the GPU's memory (`nvidia-smi` lists who holds it)"),
                   false;
        // Rank r's values, a block at a time (every block is the same: its length is whole
        // periods).
        for (std::size_t i = 0; i < block; ++i)
            host_[i] = send_value(i, r);
        for (std::size_t done = 0; done < count; done += block) {
            std::size_t n = std::min(block, count - done);
            e = rt_.Memcpy(static_cast<float*>(send_[ri]) + done, host_, n * sizeof(float),
                           api::kCudaMemcpyHostToDevice);
            if (e)
                return report_.add_problem(problem::kCudaError,
                                           "NCCL check: " +
                                               cuda_failed("cudaMemcpy (host to device)", r, e)),
                       false;
        }
    }
    return true;
}

// `times` all-reduces of `count` floats on every rank, then waits for every stream.
bool AllReduceRun::all_reduce(std::size_t count, int times) {
    for (int t = 0; t < times; ++t) {
        int result = nccl_.GroupStart();
        if (result)
            return report_.add_problem(problem::kNcclError,
                                       "NCCL check: " + nccl_failed("ncclGroupStart", result)),
                   false;
        for (int r = 0; r < ranks_; ++r) {
            const auto ri = static_cast<size_t>(r);
            result = nccl_.AllReduce(send_[ri], receive_[ri], count, api::kNcclFloat32,
                                     api::kNcclSum, comms_[ri], streams_[ri]);
            if (result) {
                nccl_.GroupEnd();
                report_.add_problem(
                    problem::kNcclError,
                    "NCCL check: all-reduce of " + size_label(count * sizeof(float)) + " on rank " +
                        std::to_string(r) + ": " + nccl_failed("ncclAllReduce", result));
                return false;
            }
        }
        result = nccl_.GroupEnd();
        if (result)
            return report_.add_problem(problem::kNcclError,
                                       "NCCL check: all-reduce of " +
                                           size_label(count * sizeof(float)) + ": " +
                                           nccl_failed("ncclGroupEnd", result)),
                   false;
    }
    for (int r = 0; r < ranks_; ++r) {
        int e = rt_.SetDevice(r);
        if (e == 0) e = rt_.StreamSynchronize(streams_[static_cast<size_t>(r)]);
        if (e)
            return report_.add_problem(problem::kCudaError,
                                       "NCCL check: all-reduce of " +
                                           size_label(count * sizeof(float)) + ": " +
                                           cuda_failed("cudaStreamSynchronize", r, e) +
                                           " (a peer-to-peer path that hangs or faults shows here; "
                                           "try NCCL_P2P_DISABLE=1 to tell)"),
                   false;
    }
    return true;
}

// Every rank's whole result against the exact sums.
void AllReduceRun::check(std::size_t count, NcclSize& out) {
    const std::size_t block = expected_.size();
    for (int r = 0; r < ranks_; ++r) {
        const auto ri = static_cast<size_t>(r);
        int e = rt_.SetDevice(r);
        for (std::size_t done = 0; e == 0 && done < count; done += block) {
            std::size_t n = std::min(block, count - done);
            e = rt_.Memcpy(host_, static_cast<const float*>(receive_[ri]) + done, n * sizeof(float),
                           api::kCudaMemcpyDeviceToHost);
            if (e) break;
            out.checked += n;
            if (std::memcmp(host_, expected_.data(), n * sizeof(float)) == 0) continue;
            for (std::size_t i = 0; i < n; ++i) {
                if (host_[i] == expected_[i]) continue;
                if (out.mismatched++ == 0) {
                    char text[160];
                    std::snprintf(text, sizeof text, "rank %d, element %zu: %g instead of %g", r,
                                  done + i, static_cast<double>(host_[i]),
                                  static_cast<double>(expected_[i]));
                    out.first_mismatch = text;
                }
            }
        }
        if (e) {
            report_.add_problem(problem::kCudaError,
                                "NCCL check: " + cuda_failed("cudaMemcpy (device to host)", r, e));
            return;
        }
    }
}

void AllReduceRun::run(int ranks) {
    ranks_ = ranks;
    NcclReport& n = report_.nccl;
    n.ranks = ranks;
    topology();
    std::vector<int> devices;
    for (int r = 0; r < ranks; ++r)
        devices.push_back(r);
    comms_.assign(static_cast<size_t>(ranks), nullptr);
    auto start = Clock::now();
    int result = nccl_.CommInitAll(comms_.data(), ranks, devices.data());
    n.init_ms = ms_since(start);
    if (result) {
        std::fill(comms_.begin(), comms_.end(), nullptr);
        report_.add_problem(
            problem::kNcclError,
            "ncclCommInitAll over " + std::to_string(ranks) + " GPU" + (ranks == 1 ? "" : "s") +
                " failed: " + nccl_failed("ncclCommInitAll", result) +
                " (NCCL's reasons show with NCCL_DEBUG=WARN; a /dev/shm too small for it, as "
                "Docker's 64 MB, fails here)");
        return;
    }
    start = Clock::now();
    // One GPU moves nothing over a link: one checked all-reduce, unless --benchmark asks for its
    // times at every size (algbw as nccl-tests has it, busbw 0), to set beside nccl-tests -g 1.
    auto sizes = nccl_sizes(o_.nccl_min_bytes, o_.nccl_max_bytes, o_.benchmark ? 2 : ranks);
    if (!setup(sizes.back())) {
        n.allreduce_ms = ms_since(start);
        return;
    }
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        NcclSize s;
        s.bytes = sizes[i];
        const std::size_t count = s.bytes / sizeof(float);
        // NaN everywhere first: a rank whose result is never written cannot pass.
        for (int r = 0; r < ranks; ++r) {
            int e = rt_.SetDevice(r);
            if (e == 0) e = rt_.Memset(receive_[static_cast<size_t>(r)], 0xff, s.bytes);
            if (e) {
                report_.add_problem(problem::kCudaError,
                                    "NCCL check: " + cuda_failed("cudaMemset", r, e));
                n.allreduce_ms = ms_since(start);
                return;
            }
        }
        // Warm-up (the first size also connects the ranks), then timed as nccl-tests do: the
        // all-reduces queued back to back, the time of all over their number.
        if (!all_reduce(count, i == 0 ? 2 : 1)) break;
        s.iterations = s.bytes <= (std::size_t(64) << 20) ? 20 : 5;
        auto t0 = Clock::now();
        if (!all_reduce(count, s.iterations)) break;
        s.time_us = ms_since(t0) * 1000.0 / s.iterations;
        if ((ranks > 1 || o_.benchmark) && s.time_us > 0) {
            s.timed = true;
            s.algbw_gbs = static_cast<double>(s.bytes) / (s.time_us * 1e-6) / 1e9;
            s.busbw_gbs = bus_bandwidth(s.algbw_gbs, ranks);
        }
        check(count, s);
        if (s.mismatched)
            report_.add_problem(problem::kWrongResult,
                                "NCCL all-reduce of " + size_label(s.bytes) + " over " +
                                    std::to_string(ranks) + " GPU" + (ranks == 1 ? "" : "s") +
                                    " is wrong: " + std::to_string(s.mismatched) + " of " +
                                    std::to_string(s.checked) +
                                    " sums differ from the exact ones (first: " + s.first_mismatch +
                                    ")");
        n.sizes.push_back(s);
        if (s.checked == 0) break;
    }
    n.allreduce_ms = ms_since(start);
}

// The NCCL log's file: NCCL_DEBUG_FILE set to a temporary file unless the user set it, and
// NCCL_DEBUG=INFO unless set, so the channels NCCL chooses can be read and nothing of NCCL's goes
// to stdout (where the JSON report is).
struct NcclLog {
    std::string file;
    bool user_debug = false;
    NcclLog() {
        user_debug = std::getenv("NCCL_DEBUG") != nullptr;
        if (std::getenv("NCCL_DEBUG_FILE")) return;
        file = os::make_temporary_file("cvm-probe-nccl-");
        if (file.empty() || !os::set_env_if_unset("NCCL_DEBUG_FILE", file)) {
            if (!file.empty()) std::remove(file.c_str());
            file.clear();
            return;
        }
        os::set_env_if_unset("NCCL_DEBUG", "INFO");
    }
    ~NcclLog() {
        if (!file.empty()) std::remove(file.c_str());
    }
    NcclLog(const NcclLog&) = delete;
    NcclLog& operator=(const NcclLog&) = delete;
    std::string text() const {
        if (file.empty()) return {};
        std::ifstream in(file, std::ios::binary);
        std::ostringstream out;
        out << in.rdbuf();
        return out.str();
    }
};

} // namespace

std::vector<std::size_t> nccl_sizes(std::size_t min, std::size_t max, int ranks) {
    min = std::max<std::size_t>(min / sizeof(float) * sizeof(float), sizeof(float));
    max = std::max(max / sizeof(float) * sizeof(float), min);
    if (ranks <= 1) return {min};
    std::vector<std::size_t> out;
    for (std::size_t s = min; s <= max; s *= 2) {
        out.push_back(s);
        if (s > max / 2) break;
    }
    if (out.back() != max) out.push_back(max);
    return out;
}

double bus_bandwidth(double algbw, int ranks) {
    if (ranks <= 1) return 0;
    return algbw * 2.0 * (ranks - 1) / ranks;
}

std::vector<NcclLink> parse_nccl_links(std::string_view log) {
    std::vector<NcclLink> out;
    std::map<std::tuple<int, int, std::string>, size_t> index;
    auto number = [](std::string_view s, size_t& at, int& value) {
        size_t start = at;
        long v = 0;
        while (at < s.size() && s[at] >= '0' && s[at] <= '9' && at - start < 6)
            v = v * 10 + (s[at++] - '0');
        value = static_cast<int>(v);
        return at > start;
    };
    auto skip_bracket = [](std::string_view s, size_t& at) {
        if (at >= s.size() || s[at] != '[') return false;
        size_t close = s.find(']', at);
        if (close == std::string_view::npos) return false;
        at = close + 1;
        return true;
    };
    auto literal = [](std::string_view s, size_t& at, std::string_view what) {
        if (s.substr(at, what.size()) != what) return false;
        at += what.size();
        return true;
    };
    size_t line_start = 0;
    while (line_start < log.size()) {
        size_t end = log.find('\n', line_start);
        std::string_view line = log.substr(
            line_start, end == std::string_view::npos ? std::string_view::npos : end - line_start);
        line_start = end == std::string_view::npos ? log.size() : end + 1;
        size_t at = line.find("Channel ");
        if (at == std::string_view::npos || line.find(" via ") == std::string_view::npos) continue;
        at += 8;
        int channel = 0, from = 0, to = 0;
        if (!number(line, at, channel)) continue;
        if (at < line.size() && line[at] == '/') {
            ++at;
            int ignored = 0;
            if (!number(line, at, ignored)) continue;
        }
        if (!literal(line, at, " : ") || !number(line, at, from) || !skip_bracket(line, at) ||
            !literal(line, at, " -> ") || !number(line, at, to) || !skip_bracket(line, at))
            continue;
        if (line.substr(at, 2) == " [") { // " [send]" / " [receive]"
            ++at;
            skip_bracket(line, at);
        }
        size_t via = line.find(" via ", at);
        if (via == std::string_view::npos ||
            line.substr(at, via - at).find_first_not_of(' ') != std::string_view::npos)
            continue;
        at = via + 5;
        size_t stop = line.find_first_of(" \t\r", at);
        std::string transport(
            line.substr(at, stop == std::string_view::npos ? std::string_view::npos : stop - at));
        if (transport.empty()) continue;
        auto key = std::make_tuple(from, to, transport);
        auto it = index.find(key);
        if (it == index.end()) {
            index[key] = out.size();
            out.push_back({from, to, transport, 1});
        } else {
            ++out[it->second].channels;
        }
    }
    return out;
}

void probe_nccl(const Options& o, const CudartApi* cudart, int device_count, int runtime_version,
                Report& report) {
    NcclReport& n = report.nccl;
    n.asked = true;
    // The variables NCCL reads; NCCL_HOME and NCCL_ROOT are build systems' (cvm sets them).
    for (auto& e : os::environment_with_prefix("NCCL_"))
        if (e.rfind("NCCL_HOME=", 0) != 0 && e.rfind("NCCL_ROOT=", 0) != 0)
            n.environment.push_back(std::move(e));
    const auto names = os::nccl_names();
    if (names.empty()) {
        report.add_problem(problem::kLibraryNotFound,
                           "NCCL is published for Linux only: there is no NCCL to load here");
        return;
    }
    NcclLog log;
    auto start = Clock::now();
    os::LibraryHandle library = load_first(names, "ncclGetVersion", n.library);
    if (!library) {
        report_not_found(report, "NCCL", "libnccl", n.library);
        return;
    }
    NcclApi nccl;
    SymbolResolver symbols(library);
    symbols.need(nccl.GetVersion, "ncclGetVersion");
    symbols.need(nccl.CommInitAll, "ncclCommInitAll");
    symbols.need(nccl.CommDestroy, "ncclCommDestroy");
    symbols.need(nccl.AllReduce, "ncclAllReduce");
    symbols.need(nccl.GroupStart, "ncclGroupStart");
    symbols.need(nccl.GroupEnd, "ncclGroupEnd");
    symbols.want(nccl.GetErrorString, "ncclGetErrorString");
    symbols.want(nccl.GetLastError, "ncclGetLastError");
    int code = -1;
    if (nccl.GetVersion && nccl.GetVersion(&code) == api::kNcclSuccess && code > 0) {
        n.version_code = code;
        if (auto v = binary::decode_nccl_version_code(code))
            n.version = std::to_string((*v)[0]) + "." + std::to_string((*v)[1]) + "." +
                        std::to_string((*v)[2]);
    }
    if (auto banner = binary::read_nccl_banner_file(n.library.path)) {
        n.banner = banner->text;
        n.built_for_cuda = banner->cuda_text();
        if (!n.version.empty() && banner->version_text() != n.version)
            report.add_problem(problem::kVersionMismatch,
                               n.library.path + " says \"" + banner->text +
                                   "\" but its ncclGetVersion returns " +
                                   std::to_string(n.version_code) + " (NCCL " + n.version +
                                   "): a renamed, patched or mislinked library; reinstall NCCL");
        if (banner->cuda_major && runtime_version >= 1000 &&
            banner->cuda_major != static_cast<unsigned>(runtime_version / 1000))
            report.warnings.push_back(
                "NCCL " + banner->version_text() + " (" + n.library.path + ") was built for CUDA " +
                n.built_for_cuda + ", the CUDA runtime loaded beside it is CUDA " +
                cuda_version_text(runtime_version) + ": install the NCCL build for CUDA " +
                std::to_string(runtime_version / 1000) + " (`cvm install nccl " +
                banner->version_text() + " --cuda " + std::to_string(runtime_version / 1000) +
                "`)");
    }
    if (!symbols.missing().empty()) {
        report.add_problem(problem::kMissingSymbol, n.library.name + " (" + n.library.path +
                                                        ") lacks " + join(symbols.missing(), ", ") +
                                                        ": it is not a complete NCCL");
        return;
    }
    // Where it was loaded from is checked with cuDNN's and the runtime's (probe.cpp's
    // inspect_modules): a merged view's link counts as the selected folder.
    if (!o.expect_nccl_version.empty() && !n.version.empty() &&
        n.version != o.expect_nccl_version && n.version.rfind(o.expect_nccl_version + ".", 0) != 0)
        report.add_problem(problem::kNotSelected,
                           n.library.path + " reports NCCL " + n.version +
                               ", but the selection is NCCL " + o.expect_nccl_version +
                               ": the selected folder holds another build than cvm recorded; "
                               "install or import that build again");
    if (!cudart || device_count <= 0) {
        n.allreduce_ms = ms_since(start);
        return; // the cuDNN part has said why there is no device
    }
    std::vector<std::string> lacking;
    if (!cudart->SetDevice) lacking.push_back("cudaSetDevice");
    if (!cudart->Memset) lacking.push_back("cudaMemset");
    if (!cudart->StreamCreate) lacking.push_back("cudaStreamCreate");
    if (!cudart->StreamSynchronize) lacking.push_back("cudaStreamSynchronize");
    if (!cudart->StreamDestroy) lacking.push_back("cudaStreamDestroy");
    if (!lacking.empty()) {
        report.add_problem(problem::kMissingSymbol,
                           "the CUDA runtime (" + report.cudart.path + ") lacks " +
                               join(lacking, ", ") +
                               ", which the NCCL check needs: it is not a complete CUDA runtime");
        return;
    }
    {
        AllReduceRun run(o, *cudart, nccl, report);
        run.run(device_count);
    }
    n.links = parse_nccl_links(log.text());
    if (log.user_debug && !log.file.empty()) {
        std::string text = log.text();
        std::fprintf(stderr, "NCCL's log (NCCL_DEBUG is set):\n%s", text.c_str());
    }
}

} // namespace cvm::probe
