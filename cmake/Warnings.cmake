# Warnings for the project's own targets; -Werror only when asked (the CI build asks).
add_library(nccltune_warnings INTERFACE)
target_compile_options(nccltune_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
  -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual
  $<$<BOOL:${NCCLTUNE_WERROR}>:-Werror>)
