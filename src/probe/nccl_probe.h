#pragma once
// The NCCL part of the probe: load libnccl.so.2 by name as a program would, one communicator over
// every visible GPU (ncclCommInitAll), all-reduces from 8 MiB to 1 GiB checked exactly on every
// rank, timed, with the bus bandwidth nccl-tests define; NCCL's version and the topology it chose.

#include "arguments.h"
#include "report.h"

#include <cstddef>
#include <string_view>
#include <vector>

namespace cvm::probe {

struct CudartApi;

// Fills report.nccl and adds problems. `cudart` is null when no CUDA runtime could be used, and
// `device_count` <= 0 when no device answered: NCCL is then only loaded and its version read.
void probe_nccl(const Options& options, const CudartApi* cudart, int device_count,
                int runtime_version, Report& report);

// The sizes measured: doubling from `min` to `max` bytes; with one rank only `min` (one GPU moves
// nothing over a link, so one checked all-reduce says all there is; --benchmark asks for every
// size, as for two ranks).
std::vector<std::size_t> nccl_sizes(std::size_t min, std::size_t max, int ranks);
// nccl-tests' all-reduce bus bandwidth: algbw * 2(n-1)/n.
double bus_bandwidth(double algbw, int ranks);
// The connections NCCL's INFO log names ("Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read", and
// the older "Channel 00 : 0[1b000] -> 1[1c000] via P2P/IPC"), each pair and transport once with
// its number of channels.
std::vector<NcclLink> parse_nccl_links(std::string_view log);

} // namespace cvm::probe
