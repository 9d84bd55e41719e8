# Sanitizer builds: -DNCCLTUNE_SANITIZE=address,undefined compiles and links every target (the fake
# GPU stack and the tuner plugin included) with them, and the first error ends the process, so a
# test that hits one fails instead of printing a report nobody reads.
set(NCCLTUNE_SANITIZE "" CACHE STRING "Sanitizers for every target, e.g. address,undefined (empty: none)")

# Shared libraries normally link with --no-undefined, so a missing symbol fails the build, not a
# job. Clang links a sanitizer's runtime into executables only: a shared library built with
# clang's sanitizers or libFuzzer's instrumentation leaves those symbols to the executable that
# loads it, so there the check is off.
set(NCCLTUNE_NO_UNDEFINED -Wl,--no-undefined)
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang" AND (NCCLTUNE_SANITIZE OR NCCLTUNE_FUZZ))
  set(NCCLTUNE_NO_UNDEFINED "")
endif()

# The tests' environment under sanitizers: test registrations append it to ENVIRONMENT. The
# suppressions (tests/sanitizers/) are for the system libraries we cannot fix (Open MPI, hwloc).
# NCCLTUNE_SANITIZE also tells the test scripts which checks cannot hold here (they exit 77).
set(NCCLTUNE_SANITIZER_ENV "")
if(NCCLTUNE_SANITIZE)
  set(flags -fsanitize=${NCCLTUNE_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  include(CheckCXXSourceCompiles)
  unset(NCCLTUNE_CAN_SANITIZE CACHE)  # asked again whenever the list changes
  string(REPLACE ";" " " CMAKE_REQUIRED_FLAGS "${flags}")
  set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=${NCCLTUNE_SANITIZE})
  check_cxx_source_compiles("int main() { return 0; }" NCCLTUNE_CAN_SANITIZE)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(NOT NCCLTUNE_CAN_SANITIZE)
    message(FATAL_ERROR "NCCLTUNE_SANITIZE=${NCCLTUNE_SANITIZE}: the compiler cannot build and link with ${flags}")
  endif()
  add_compile_options(${flags})
  add_link_options(-fsanitize=${NCCLTUNE_SANITIZE})
  message(STATUS "nccltune: sanitizers ${NCCLTUNE_SANITIZE} on every target")

  set(supp ${PROJECT_SOURCE_DIR}/tests/sanitizers)
  set(NCCLTUNE_SANITIZER_ENV
    "NCCLTUNE_SANITIZE=${NCCLTUNE_SANITIZE}"
    "ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:suppressions=${supp}/asan.supp"
    "LSAN_OPTIONS=suppressions=${supp}/lsan.supp:print_suppressions=0"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=${supp}/ubsan.supp")
  unset(supp)
  unset(flags)
endif()

# nccltune_sanitizer_env(VAR [FULL_STACKS]): NCCLTUNE_SANITIZER_ENV, into VAR. FULL_STACKS, for
# tests that reach MPI or hwloc (everything but the search's tests, which link neither): Open MPI
# and hwloc's PCI plugin are built without frame pointers and dlclosed before exit, so only the
# slow unwinder (fast_unwind_on_malloc=0) records stacks that reach the frames lsan.supp names. It
# makes allocations about ten times slower, too slow for the search's tests.
function(nccltune_sanitizer_env var)
  cmake_parse_arguments(arg "FULL_STACKS" "" "" ${ARGN})
  set(env ${NCCLTUNE_SANITIZER_ENV})
  if(arg_FULL_STACKS)
    list(TRANSFORM env REPLACE "^ASAN_OPTIONS=" "ASAN_OPTIONS=fast_unwind_on_malloc=0:")
  endif()
  set(${var} ${env} PARENT_SCOPE)
endfunction()

# nccltune_sanitizer_environment([FULL_STACKS]): appends the sanitizer environment to every test
# registered so far in the calling directory; call it at the end of a CMakeLists.txt.
function(nccltune_sanitizer_environment)
  nccltune_sanitizer_env(env ${ARGN})
  get_property(tests DIRECTORY PROPERTY TESTS)
  if(env AND tests)
    set_property(TEST ${tests} APPEND PROPERTY ENVIRONMENT ${env})
  endif()
endfunction()

# nccltune_gtest_properties(TARGET [FULL_STACKS] [ENV VAR=VALUE...]): every test
# gtest_discover_tests(TARGET) finds gets the labels TARGET and unit (`ctest -L '^unit$'`) and the
# ENVIRONMENT VAR=VALUE..., then the sanitizer environment. Not through gtest_discover_tests'
# PROPERTIES: it splits a list there (CMake 3.25), so only the first variable would survive. A
# ctest include file read after the discovered tests (named in TARGET_TESTS) sets them.
function(nccltune_gtest_properties target)
  cmake_parse_arguments(arg "FULL_STACKS" "" "ENV" ${ARGN})
  if(arg_FULL_STACKS)
    nccltune_sanitizer_env(sanitizer_env FULL_STACKS)
  else()
    nccltune_sanitizer_env(sanitizer_env)
  endif()
  set(env ${arg_ENV} ${sanitizer_env})
  set(file ${CMAKE_CURRENT_BINARY_DIR}/${target}_properties.cmake)
  file(WRITE ${file}
    "foreach(test IN LISTS ${target}_TESTS)\n"
    "  set_tests_properties(\"\${test}\" PROPERTIES LABELS \"${target};unit\" ENVIRONMENT [==[${env}]==])\n"
    "endforeach()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${file})
endfunction()
