#pragma once
// Our own declarations of the part of NCCL's documented C API the probe calls (nccl.h), as
// function-pointer types: the probe links no NCCL, it loads libnccl.so.2 by name at run time.

#include "api.h"

#include <cstddef>

namespace cvm::probe::api {

using ncclResult = int;
constexpr ncclResult kNcclSuccess = 0;

struct ncclComm;
using ncclComm_t = ncclComm*;

constexpr int kNcclFloat32 = 7; // ncclFloat32 (ncclFloat)
constexpr int kNcclSum = 0;     // ncclSum

using ncclGetVersion_t = ncclResult (*)(int* version);
using ncclCommInitAll_t = ncclResult (*)(ncclComm_t* comms, int count, const int* devices);
using ncclCommDestroy_t = ncclResult (*)(ncclComm_t comm);
using ncclAllReduce_t = ncclResult (*)(const void* send, void* receive, std::size_t count,
                                       int datatype, int op, ncclComm_t comm, cudaStream stream);
using ncclGroupStart_t = ncclResult (*)();
using ncclGroupEnd_t = ncclResult (*)();
using ncclGetErrorString_t = const char* (*)(ncclResult result);
using ncclGetLastError_t = const char* (*)(ncclComm_t comm); // NCCL 2.13 and later

} // namespace cvm::probe::api
