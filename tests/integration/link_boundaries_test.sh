#!/usr/bin/env bash
# The built files keep the boundaries that CMake's check (cmake/LinkBoundaries.cmake) keeps in the
# graph: no MPI, hwloc or verbs in the pure libraries' tests, nccltune-env and the tuner plugin.
# usage: link_boundaries_test.sh SEARCH_UNIT_TESTS BINARY...
source "$(dirname "$0")/lib.sh"

forbidden='libmpi|libopen-|libhwloc|libibverbs|libpmix'
for binary in "$@"; do
  # NEEDED entries of the file itself (none for a static executable), then everything ld.so loads.
  needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  loaded=$(ldd "$binary" 2>&1 || true)
  if printf '%s\n%s\n' "$needed" "$loaded" | grep -Eq "$forbidden"; then
    fail "$(basename "$binary") loads MPI, hwloc or verbs: $(printf '%s\n' "$loaded" | grep -E "$forbidden" | tr -s ' \n' ' ')"
  else
    pass
  fi
done
# The search library's tests run, so "links" is also "works".
expect_status 0 "search unit tests run without MPI, hwloc or verbs" "$1" --gtest_brief=1
finish
