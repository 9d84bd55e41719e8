# Every external dependency is a Debian package (see run.sh); nothing is downloaded.
find_package(PkgConfig REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)
pkg_check_modules(IBVERBS REQUIRED IMPORTED_TARGET libibverbs)
pkg_check_modules(LIBSYSTEMD REQUIRED IMPORTED_TARGET libsystemd)  # nccltuned's sd_notify
find_package(yaml-cpp REQUIRED)
find_package(spdlog REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(Threads REQUIRED)

# CUDA and NCCL are loaded at run time with dlopen; their headers are only used, when present,
# to check at compile time that the project's own declarations match them.
find_path(NCCLTUNE_NCCL_HEADER_DIR nccl.h PATHS /usr/local/cuda/include /usr/include NO_CACHE)
if(NCCLTUNE_NCCL_HEADER_DIR)
  message(STATUS "nccl.h found in ${NCCLTUNE_NCCL_HEADER_DIR}: declarations are checked against it")
else()
  message(STATUS "nccl.h not found: declaration checks are skipped")
endif()
