# Sanitizer builds: -DNCCLTUNE_SANITIZE=address,undefined compiles and links every target (the fake
# GPU stack and the tuner plugin included) with them, and the first error ends the process, so a
# test that hits one fails instead of printing a report nobody reads.
set(NCCLTUNE_SANITIZE "" CACHE STRING "Sanitizers for every target, e.g. address,undefined (empty: none)")

# The tests' environment under sanitizers: test registrations append it to ENVIRONMENT. The
# suppressions (tests/sanitizers/) are for the system libraries we cannot fix: MPI, hwloc, verbs.
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
    # fast_unwind_on_malloc=0: full allocation stacks through libraries built without frame
    # pointers (Open MPI), or lsan.supp cannot tell their leaks from ours.
    "ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:fast_unwind_on_malloc=0:suppressions=${supp}/asan.supp"
    "LSAN_OPTIONS=suppressions=${supp}/lsan.supp:print_suppressions=0"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=${supp}/ubsan.supp")
  unset(supp)
  unset(flags)
endif()

# nccltune_sanitizer_environment(): appends NCCLTUNE_SANITIZER_ENV to every test registered so far
# in the calling directory. Call it at the end of a CMakeLists.txt that adds tests.
function(nccltune_sanitizer_environment)
  if(NOT NCCLTUNE_SANITIZER_ENV)
    return()
  endif()
  get_property(tests DIRECTORY PROPERTY TESTS)
  if(tests)
    set_property(TEST ${tests} APPEND PROPERTY ENVIRONMENT ${NCCLTUNE_SANITIZER_ENV})
  endif()
endfunction()

# nccltune_gtest_properties(TARGET [VAR=VALUE...]): every test gtest_discover_tests(TARGET) finds
# gets the label TARGET (`ctest -L unit_tests`) and the ENVIRONMENT VAR=VALUE..., then
# NCCLTUNE_SANITIZER_ENV. Not through gtest_discover_tests' PROPERTIES: it splits a list there
# (CMake 3.25), so only the first variable would survive. A ctest include file read after the
# discovered tests (named in TARGET_TESTS) sets them.
function(nccltune_gtest_properties target)
  set(env ${ARGN} ${NCCLTUNE_SANITIZER_ENV})
  set(file ${CMAKE_CURRENT_BINARY_DIR}/${target}_properties.cmake)
  file(WRITE ${file}
    "foreach(test IN LISTS ${target}_TESTS)\n"
    "  set_tests_properties(\"\${test}\" PROPERTIES LABELS ${target} ENVIRONMENT [==[${env}]==])\n"
    "endforeach()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${file})
endfunction()
