#pragma once
// Multi-GPU radix sort over NCCL: prims::dist::radix_sort_keys and radix_sort_pairs.
//
// Collective: every rank of an ncclComm_t calls it with its own shard on its own GPU (the current device must be
// the communicator's). On return the shards, concatenated in rank order, are the stable sorted sequence of all
// ranks' keys (equal keys keep (rank, index) order), and every rank holds as many keys as it gave, so the caller's
// buffers never change size. Keys, values, orders and float order are those of prims::device::radix_sort_keys.
//
// The algorithm (detail/radix_sort_phases.cuh, docs/design-notes.md): partition the shard by the top digit,
// find exact splitters by refining only the buckets that hold the rank boundaries, then exchange and sort the
// remaining digits: one Onesweep pass gathers every arriving piece into its bucket, sorted on the lowest digit,
// and segmented Onesweep passes sort the other digits bucket by bucket. Where every rank is in this process and
// their GPUs reach each other's memory, the gathering pass reads the peers' partitioned buffers (in `temp`) over
// the links (a prefix of them copied ahead by a kernel while the rank counts its pieces); for that, `temp` must be memory that peer access covers (cudaMalloc's; memory from a stream-ordered
// pool or a virtual-memory allocator needs its peers' access granted first). Otherwise grouped ncclSend/ncclRecv
// bring the pieces first. The host needs the exchange counts, so the call synchronizes `s`: once per splitter
// round (at most one per key byte); the exchange and the sort are still queued on `s` when it returns.
//
// Two-phase temporary storage as everywhere in prims: a call with temp == nullptr stores the bytes needed in
// temp_bytes and communicates nothing. The size depends on n_local and the number of ranks only, so it suffices
// whatever the other ranks hold. Errors come back as ncclResult_t: CUDA failures as ncclUnhandledCudaError, bad
// arguments (null comm, null buffers, too little temp) as ncclInvalidArgument, a current device other than the
// communicator's as ncclInvalidUsage. The call never throws and never aborts the communicator. A rank that fails
// before a collective leaves its peers waiting in it: as with any NCCL collective, handle that with the
// communicator's own tools (ncclCommAbort from the application).

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>

#include "prims/device/radix_sort.cuh"
#include "prims/dist/detail/radix_sort_phases.cuh"

namespace prims::dist {

/// Sorts keys spread over the ranks of `comm`: this rank gives keys_in[0..n_local) and gets keys_out[0..n_local),
/// its slice of the global stable order. keys_in == keys_out works. Synchronizes `s` while it plans the exchange;
/// the rest is queued on `s` when it returns.
/// Example (two GPUs, one thread each; comms from ncclCommInitAll, d_keys and d_sorted on rank r's GPU):
///   cudaSetDevice(r);
///   size_t bytes = 0;
///   prims::dist::radix_sort_keys(comms[r], nullptr, bytes, d_keys, d_sorted, n_local);   // size only
///   cudaMalloc(&temp, bytes);
///   ncclResult_t result = prims::dist::radix_sort_keys(comms[r], temp, bytes, d_keys, d_sorted, n_local);
///   // rank 0 holds the smallest n_local keys of both GPUs, rank 1 the rest; result == ncclSuccess
template <class K>
ncclResult_t radix_sort_keys(ncclComm_t comm, void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out,
                             size_t n_local, prims::device::Order order = prims::device::Order::Ascending,
                             cudaStream_t s = 0) {
  const prims::detail::PassBuffers<K, prims::detail::NoValues> io{keys_in, keys_out, nullptr, nullptr};
  return detail::radix_sort(comm, temp, temp_bytes, io, n_local, order, s);
}

/// Sorts (key, value) pairs spread over the ranks of `comm` by key: values move with their keys, equal keys keep
/// (rank, index) order. In place works (keys_in == keys_out and values_in == values_out). Synchronizes `s` while
/// it plans the exchange; the rest is queued on `s` when it returns.
/// Example (a distributed argsort: values are global indices):
///   size_t bytes = 0;
///   prims::dist::radix_sort_pairs(comm, nullptr, bytes, d_keys, d_keys_out, d_index, d_index_out, n_local);
///   cudaMalloc(&temp, bytes);
///   prims::dist::radix_sort_pairs(comm, temp, bytes, d_keys, d_keys_out, d_index, d_index_out, n_local,
///                                 prims::device::Order::Descending, stream);
template <class K, class V>
ncclResult_t radix_sort_pairs(ncclComm_t comm, void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out,
                              const V* values_in, V* values_out, size_t n_local,
                              prims::device::Order order = prims::device::Order::Ascending, cudaStream_t s = 0) {
  const prims::detail::PassBuffers<K, V> io{keys_in, keys_out, values_in, values_out};
  return detail::radix_sort(comm, temp, temp_bytes, io, n_local, order, s);
}

}  // namespace prims::dist
