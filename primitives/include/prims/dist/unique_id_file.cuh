#pragma once
// Handing NCCL's unique id from rank 0 to the other processes through a file they all see (a launcher that starts
// one process per GPU without MPI: torchrun-style RANK / WORLD_SIZE / LOCAL_RANK). Rank 0 writes the id to a
// temporary file and renames it into place, so a reader never sees half of it; the others poll until it is there.
// Example:
//   ncclUniqueId id{};
//   if (rank == 0) { ncclGetUniqueId(&id); prims::dist::write_unique_id_file(path, id); }
//   else id = prims::dist::read_unique_id_file(path, 120.0);
//   ncclCommInitRank(&comm, world_size, id, rank);   // then rank 0 may remove the file

#include <nccl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace prims::dist {

/// Writes `id` to `path` atomically (a temporary file of this process, renamed into place); throws
/// std::runtime_error where it cannot.
inline void write_unique_id_file(const std::string& path, const ncclUniqueId& id) {
  const std::string temporary = path + "." + std::to_string(static_cast<long>(getpid())) + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary);
    out.write(id.internal, sizeof(id.internal));
    if (!out) {
      std::remove(temporary.c_str());
      throw std::runtime_error("cannot write " + temporary);
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw std::runtime_error("cannot rename " + temporary + " to " + path);
  }
}

/// Waits up to timeout_s seconds for `path` to hold an id, then returns it; throws std::runtime_error if none came.
inline ncclUniqueId read_unique_id_file(const std::string& path, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    std::ifstream in(path, std::ios::binary);
    ncclUniqueId id{};
    if (in.read(id.internal, sizeof(id.internal))) return id;
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("no NCCL id in " + path + " in time");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace prims::dist
