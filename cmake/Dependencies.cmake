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

# fmt and spdlog header-only everywhere (Debian ships neither as a static archive): no binary
# loads libfmt.so or libspdlog.so, and the static nccltune-env and the self-contained tuner
# plugin can link every library they need.
add_library(nccltune_fmt INTERFACE)
target_compile_definitions(nccltune_fmt INTERFACE FMT_HEADER_ONLY=1)
add_library(nccltune_spdlog INTERFACE)
target_compile_definitions(nccltune_spdlog INTERFACE SPDLOG_FMT_EXTERNAL)
target_link_libraries(nccltune_spdlog INTERFACE nccltune_fmt Threads::Threads)

# yaml-cpp: the shared library, except for a binary whose NCCLTUNE_STATIC_YAML_CPP property is ON
# (nccltune-env, the tuner plugin): those link the static archive. The choice is the linking
# target's, so the libraries below name one dependency whoever links them.
find_library(NCCLTUNE_YAML_CPP_STATIC NAMES libyaml-cpp.a)
add_library(nccltune_yaml_cpp INTERFACE)
if(NCCLTUNE_YAML_CPP_STATIC)
  target_link_libraries(nccltune_yaml_cpp INTERFACE
    $<IF:$<BOOL:$<TARGET_PROPERTY:NCCLTUNE_STATIC_YAML_CPP>>,${NCCLTUNE_YAML_CPP_STATIC},yaml-cpp>)
else()
  target_link_libraries(nccltune_yaml_cpp INTERFACE yaml-cpp)
endif()
target_include_directories(nccltune_yaml_cpp SYSTEM INTERFACE $<TARGET_PROPERTY:yaml-cpp,INTERFACE_INCLUDE_DIRECTORIES>)

# CUDA and NCCL are loaded at run time with dlopen; their headers are only used, when present,
# to check at compile time that the project's own declarations match them.
find_path(NCCLTUNE_NCCL_HEADER_DIR nccl.h PATHS /usr/local/cuda/include /usr/include NO_CACHE)
if(NCCLTUNE_NCCL_HEADER_DIR)
  message(STATUS "nccl.h found in ${NCCLTUNE_NCCL_HEADER_DIR}: declarations are checked against it")
else()
  message(STATUS "nccl.h not found: declaration checks are skipped")
endif()

# nccltune_library(NAME [PUBLIC deps...] [PRIVATE deps...]): the static library of one folder,
# from every .cpp in it, with the project root and tuner/ as include roots, so that headers are
# included with their folder ("profile/profile.h", "topology/checks.h").
option(NCCLTUNE_UNITY_BUILD "Compile each library's files in batches (unity build)" ON)
function(nccltune_library name)
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  list(FILTER sources EXCLUDE REGEX "/main\\.cpp$")
  add_library(${name} STATIC ${sources})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/tuner)
  target_link_libraries(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE nccltune_warnings)
  target_compile_options(${name} PRIVATE ${NCCLTUNE_FUZZ_LIBRARY_FLAGS})  # cmake/Fuzzing.cmake
  set_property(GLOBAL APPEND PROPERTY NCCLTUNE_FOLDER_TARGETS ${name})
  # One compiler run per few files of a library rather than per file: the headers they share
  # (yaml-cpp, nlohmann/json, fmt, the standard library) are parsed once per batch. Names in a
  # file's anonymous namespace must therefore be unique within its library.
  set_target_properties(${name} PROPERTIES UNITY_BUILD ${NCCLTUNE_UNITY_BUILD})
endfunction()
