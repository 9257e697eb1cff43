// The test-only switch that forces a tuning table (prims/device/detail/tuning.cuh): every test binary links it.
// PRIMS_TEST_TUNING=sm80, sm86, sm90 or sm100 makes every dispatcher take that table, and caps the shared memory a
// block may use at the table's (so the library's run-time choices follow the GPU the table is for), whatever GPU
// runs the tests: every table runs on an H100. Unset: the device's own table.

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "prims/device/detail/tuning.cuh"
#include "prims/util/device_properties.cuh"

namespace {

bool force_tuning_table() {
  const char* name = std::getenv("PRIMS_TEST_TUNING");
  if (name == nullptr || *name == '\0') return false;
  using prims::detail::Generation;
  for (const Generation generation : {Generation::Sm80, Generation::Sm86, Generation::Sm90, Generation::Sm100}) {
    if (std::strcmp(name, prims::detail::generation_name(generation)) == 0) {
      prims::detail::tuning_override_for_tests().store(static_cast<int>(generation));
      prims::detail::shared_memory_cap_for_tests().store(prims::detail::table_shared_bytes(generation));
      std::fprintf(stderr, "prims tests: tuning table %s forced\n", name);
      return true;
    }
  }
  std::fprintf(stderr, "PRIMS_TEST_TUNING=%s is not one of sm80, sm86, sm90, sm100\n", name);
  std::exit(2);
}

const bool forced = force_tuning_table();

}  // namespace
