#!/usr/bin/env bash
# The header rule: a file of a library's folder includes only headers of its own folder and of
# the libraries that folder's targets link (their folders, or an INTERFACE library's own headers).
# So a pure library cannot reach MPI, hwloc or verbs through a header either, and a test of it
# builds with that library alone. The allowed list per folder comes from CMake's link graph
# (nccltune_write_include_rules in cmake/LinkBoundaries.cmake writes it at configure time).
# usage: include_rules_test.sh INCLUDE_RULES_FILE SOURCE_DIR
rules=$1
root=$2
source "$(dirname "$0")/lib.sh"

[ -s "$rules" ] || { fail "no rules in $rules"; finish; exit 1; }
folders=0
while IFS= read -r line; do
  folder=${line%%:*}
  read -r -a allowed <<<"${line#*:}"
  folders=$((folders + 1))
  bad=""
  for file in "$root/$folder"/*.h "$root/$folder"/*.cpp; do
    [ -f "$file" ] || continue
    while IFS= read -r included; do
      # The include roots are the repository and tuner/; a header of neither is not the project's.
      if [ -f "$root/$included" ]; then path=$included
      elif [ -f "$root/tuner/$included" ]; then path=tuner/$included
      else continue; fi
      owner=${path%/*}
      [ "$owner" = "$folder" ] && continue
      ok=0
      for entry in "${allowed[@]}"; do
        if [ "$entry" = "$owner" ] || [ "$entry" = "$path" ]; then ok=1; break; fi
      done
      [ "$ok" -eq 1 ] || bad+="  ${file#"$root"/} includes $path, of $owner, which $folder does not link"$'\n'
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\/[^"]*\)".*/\1/p' "$file")
  done
  if [ -z "$bad" ]; then pass; else fail "$folder:"; printf '%s' "$bad"; fi
done <"$rules"
[ "$folders" -ge 15 ] && pass || fail "only $folders folders in $rules"
finish
