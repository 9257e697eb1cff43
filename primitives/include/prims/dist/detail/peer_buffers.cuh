#pragma once
// Every rank's partitioned buffers as addresses this rank's kernels can read, so that the exchange is the local
// sort's first pass reading each piece where it lies, over NVLink (or PCIe peer to peer), instead of NCCL's sends
// and receives through staging. That needs every rank in this process (one address space) and peer access between
// every pair of their GPUs; otherwise every rank learns it from one all-gathered flag and the exchange goes through
// NCCL. Ranks in other processes could be reached through CUDA IPC, but mapping the peers' buffers for every call
// cost more than the whole sort (see docs/design-notes.md).

#include <cuda_runtime.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <vector>

namespace prims::dist::detail {

/// What a rank tells the others about itself and its partitioned buffers (all-gathered as bytes).
struct PeerIdentity {
  uint64_t process;       // a number drawn once per process: equal numbers, one process
  int64_t device;         // the CUDA device ordinal
  uint64_t addresses[2];  // the partitioned keys and values (0: none)
};

/// The peers' partitioned buffers (keys, values) as this rank's addresses.
class PeerBuffers {
 public:
  /// This rank's identity for buffers `keys` and `values` (either may be null).
  static PeerIdentity identify(const void* keys, const void* values) {
    int device = 0;
    cudaGetDevice(&device);
    return PeerIdentity{process_number(), device, {reinterpret_cast<uintptr_t>(keys),
                                                   reinterpret_cast<uintptr_t>(values)}};
  }

  /// Makes every peer's buffers addressable from this rank (enabling peer access); false where one is not.
  bool open(const std::vector<PeerIdentity>& ranks, int rank) {
    const PeerIdentity& me = ranks[static_cast<size_t>(rank)];
    keys_.clear();
    values_.clear();
    bool reachable = true;
    for (const PeerIdentity& peer : ranks) {
      reachable = reachable && peer.process == me.process &&
                  enable_peer_access(static_cast<int>(me.device), static_cast<int>(peer.device));
      keys_.push_back(reinterpret_cast<void*>(peer.addresses[0]));
      values_.push_back(reinterpret_cast<void*>(peer.addresses[1]));
    }
    return reachable;
  }

  /// Rank q's partitioned keys (values) as this rank's address, after open().
  void* keys(int q) const { return keys_[static_cast<size_t>(q)]; }
  void* values(int q) const { return values_[static_cast<size_t>(q)]; }

 private:
  static uint64_t process_number() {
    static const uint64_t number = [] {
      uint64_t drawn = static_cast<uint64_t>(getpid()) << 32;
      try {
        std::random_device device;
        drawn ^= static_cast<uint64_t>(device()) << 16 ^ device();
      } catch (...) {
        drawn ^= static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
      }
      return drawn;
    }();
    return number;
  }

  static bool enable_peer_access(int device, int peer) {
    if (device == peer) return true;
    int can = 0;
    if (cudaDeviceCanAccessPeer(&can, device, peer) != cudaSuccess || can == 0) {
      cudaGetLastError();
      return false;
    }
    const cudaError_t enabled = cudaDeviceEnablePeerAccess(peer, 0);
    cudaGetLastError();  // already enabled is an answer, not an error
    return enabled == cudaSuccess || enabled == cudaErrorPeerAccessAlreadyEnabled;
  }

  std::vector<void*> keys_;
  std::vector<void*> values_;
};

}  // namespace prims::dist::detail
