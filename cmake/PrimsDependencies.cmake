# Dependencies of the tests, benches and apps (the library itself needs only the CUDA runtime).
# Everything comes from the system: Debian/Ubuntu packages and the CUDA Toolkit. Nothing is downloaded.

# Thrust and CUB, for the comparisons, from the toolkit's own CCCL.
find_package(CCCL CONFIG REQUIRED HINTS "${CUDAToolkit_LIBRARY_DIR}/cmake" "${CUDAToolkit_LIBRARY_ROOT}/lib64/cmake")

# fmt: the packaged library, or its headers alone where only those are installed.
find_package(fmt CONFIG QUIET)
if(NOT TARGET fmt::fmt)
  find_path(PRIMS_FMT_INCLUDE fmt/format.h REQUIRED)
  add_library(prims_fmt INTERFACE)
  target_include_directories(prims_fmt SYSTEM INTERFACE ${PRIMS_FMT_INCLUDE})
  target_compile_definitions(prims_fmt INTERFACE FMT_HEADER_ONLY=1)
  add_library(fmt::fmt ALIAS prims_fmt)
endif()

# CLI11 is header-only.
find_package(CLI11 CONFIG QUIET)
if(NOT TARGET CLI11::CLI11)
  find_path(PRIMS_CLI11_INCLUDE CLI/CLI.hpp REQUIRED)
  add_library(prims_cli11 INTERFACE)
  target_include_directories(prims_cli11 SYSTEM INTERFACE ${PRIMS_CLI11_INCLUDE})
  add_library(CLI11::CLI11 ALIAS prims_cli11)
endif()

# googletest: the packaged libraries, or built from the packaged sources.
if(PRIMS_BUILD_TESTS)
  find_package(GTest QUIET)
  if(NOT TARGET GTest::gtest_main)
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    add_subdirectory(/usr/src/googletest ${PROJECT_BINARY_DIR}/googletest EXCLUDE_FROM_ALL)
    add_library(GTest::gtest_main ALIAS gtest_main)
    add_library(GTest::gtest ALIAS gtest)
  endif()
  include(GoogleTest)
endif()

find_package(Threads REQUIRED)
