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

# With NCCLTUNE_SANITIZE=address,undefined as well (./run.sh test's one instrumented build, which
# serves the sanitizer suite and the fuzz targets alike), the sanitizers come from there and the
# libraries get libFuzzer's coverage instrumentation on top.
if(NCCLTUNE_SANITIZE)
  if(NOT NCCLTUNE_SANITIZE MATCHES "address")
    message(FATAL_ERROR "NCCLTUNE_FUZZ=ON with NCCLTUNE_SANITIZE=${NCCLTUNE_SANITIZE}: the fuzz targets need address")
  endif()
  # Only the libraries (nccltune_library) get the coverage instrumentation: the fuzz targets need
  # it in the parsers they link, and the tests' own files, the heaviest to compile, do not.
  set(NCCLTUNE_FUZZ_LIBRARY_FLAGS -fsanitize=fuzzer-no-link)
else()
  set(NCCLTUNE_FUZZ_SANITIZERS -fsanitize=address,undefined -fno-sanitize-recover=undefined)
  add_compile_options(-fsanitize=fuzzer-no-link ${NCCLTUNE_FUZZ_SANITIZERS} -fno-omit-frame-pointer)
  add_link_options(${NCCLTUNE_FUZZ_SANITIZERS})
endif()
