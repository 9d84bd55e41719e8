# Which libraries may use which is the dependency graph of target_link_libraries; these checks
# keep the boundaries that matter to users: the search links no MPI, hwloc or verbs, and neither
# do what every node and every NCCL application loads (nccltune-env, the tuner plugin).
# Configuring fails when a change pulls one of them in (tests/integration/link_boundaries_test.sh
# checks the built files too).

# The targets `target` links, directly or through the libraries it links, PRIVATE usage of
# static libraries included ($<LINK_ONLY:...>).
function(_nccltune_link_closure target out)
  set(seen "")
  set(queue ${target})
  while(queue)
    list(POP_FRONT queue current)
    if(current IN_LIST seen OR NOT TARGET ${current})
      continue()
    endif()
    list(APPEND seen ${current})
    get_target_property(aliased ${current} ALIASED_TARGET)
    if(aliased)
      list(APPEND queue ${aliased})
    endif()
    set(links "")
    get_target_property(type ${current} TYPE)
    if(current STREQUAL target AND NOT type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(links ${current} LINK_LIBRARIES)
    else()
      get_target_property(links ${current} INTERFACE_LINK_LIBRARIES)
    endif()
    foreach(link IN LISTS links)
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" link "${link}")
      if(TARGET ${link})
        list(APPEND queue ${link})
      endif()
    endforeach()
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

# nccltune_forbid_links(TARGETS t... FORBIDDEN f...): a configure error when a target's closure
# holds a forbidden one.
function(nccltune_forbid_links)
  cmake_parse_arguments(ARG "" "" "TARGETS;FORBIDDEN" ${ARGN})
  foreach(target IN LISTS ARG_TARGETS)
    _nccltune_link_closure(${target} closure)
    foreach(forbidden IN LISTS ARG_FORBIDDEN)
      if(forbidden IN_LIST closure)
        message(FATAL_ERROR "${target} links ${forbidden} (through: ${closure}); docs/ARCHITECTURE.md says why it must not")
      endif()
    endforeach()
  endforeach()
endfunction()
