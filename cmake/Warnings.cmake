# Warnings for the project's own targets; -Werror only when asked (the CI build asks).
add_library(nccltune_warnings INTERFACE)
target_compile_options(nccltune_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion -Wcast-align
  $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual>
  $<$<BOOL:${NCCLTUNE_WERROR}>:-Werror>)
# GCC 12 reports false maybe-uninitialized warnings for std::optional<std::string> copies
# (GCC bug 105562 and friends); they would turn -Werror builds red for correct code.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(nccltune_warnings INTERFACE -Wno-maybe-uninitialized)
endif()
