#pragma once
// One host thread per GPU: how a single process drives every rank of a communicator made by ncclCommInitAll, since
// each rank's NCCL calls block until all ranks have made theirs.

#include <cuda_runtime.h>

#include <exception>
#include <string>
#include <thread>
#include <vector>

namespace prims::dist {

/// Runs body(g) for g = 0 .. gpus - 1, each on its own host thread with GPU g current, and waits for all of them.
/// Returns one message per GPU: empty where body returned, else what it threw (or why GPU g could not be selected).
/// Example:
///   const auto errors = prims::dist::on_each_gpu(2, [&](int g) { sort_my_shard(comms[g], g); });
template <class Body>
std::vector<std::string> on_each_gpu(int gpus, Body body) {
  std::vector<std::string> errors(static_cast<size_t>(gpus));
  std::vector<std::thread> threads;
  for (int g = 0; g < gpus; ++g) {
    threads.emplace_back([&, g] {
      std::string& error = errors[static_cast<size_t>(g)];
      const cudaError_t selected = cudaSetDevice(g);
      if (selected != cudaSuccess) {
        error = std::string("cudaSetDevice: ") + cudaGetErrorString(selected);
        return;
      }
      try {
        body(g);
      } catch (const std::exception& e) {
        error = e.what();
        if (error.empty()) error = "unnamed exception";
      } catch (...) {
        error = "unknown exception";
      }
    });
  }
  for (auto& thread : threads) thread.join();
  return errors;
}

}  // namespace prims::dist
