# NCCLTUNE_FUZZ=ON: the libFuzzer build (tests/fuzz). Clang only. Every library is compiled with
# libFuzzer's coverage instrumentation plus ASan and UBSan; the fuzz targets add libFuzzer's main
# (tests/fuzz/CMakeLists.txt). UBSan stops at the first report, so undefined behaviour is a crash
# the fuzzer keeps, not a line in its log.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang" OR NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR
    "NCCLTUNE_FUZZ=ON needs clang (libFuzzer), but the compilers are "
    "${CMAKE_C_COMPILER_ID} / ${CMAKE_CXX_COMPILER_ID}. Configure a fresh build directory with "
    "CC=clang-14 CXX=clang++-14 (tests/fuzz/run.sh does).")
endif()

if(NCCLTUNE_SANITIZE)
  message(FATAL_ERROR "NCCLTUNE_FUZZ=ON builds with address,undefined already; leave NCCLTUNE_SANITIZE empty")
endif()

set(NCCLTUNE_FUZZ_SANITIZERS -fsanitize=address,undefined -fno-sanitize-recover=undefined)
add_compile_options(-fsanitize=fuzzer-no-link ${NCCLTUNE_FUZZ_SANITIZERS} -fno-omit-frame-pointer)
add_link_options(${NCCLTUNE_FUZZ_SANITIZERS})
