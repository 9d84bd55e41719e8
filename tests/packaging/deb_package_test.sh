#!/usr/bin/env bash
# The Debian package as an admin gets it, from this build tree (no second compile): `cpack -G DEB`
# (and its refusal of another prefix), the control fields (Depends: names the package of every
# library a packaged file links), no fake GPU library or test file in it, the config a conffile,
# maintainer scripts that only reload systemd; installed with dpkg into a scratch root with its
# own database (--force-depends: the libraries are this machine's, checked with ldd), the binaries
# run from there, the unit passes systemd-analyze verify, an edited config survives a reinstall
# and `dpkg -r`, and --purge leaves nothing. Nothing is installed on this machine. Skipped (77)
# only when dpkg or dpkg-deb is missing; a missing dpkg-shlibdeps fails cpack, and the test.
# usage: deb_package_test.sh CPACK BUILD_DIR SOURCE_DIR PREFIX CONFIG_FILE VERSION PLUGIN_FILE_NAME...
cpack=$1
build_dir=$2
source_dir=$3
prefix=$4
config=$5
version=$6
shift 6
plugins=("$@")
source "$(dirname "$0")/../integration/lib.sh"
for tool in dpkg dpkg-deb; do
  if ! command -v "$tool" >/dev/null; then
    echo "$test_name: skipped: $tool is not installed"
    exit 77
  fi
done

# --- the package --------------------------------------------------------------------------------
# -B: CPack's staging and the .deb go to the scratch directory, not into the build tree.
if (cd "$work" && "$cpack" -G DEB --config "$build_dir/CPackConfig.cmake" -B "$work/pkg") >"$work/cpack.log" 2>&1; then
  pass
else
  fail "cpack -G DEB"; sed 's/^/  | /' "$work/cpack.log"; finish; exit
fi
# Another prefix at cpack time would not be where the binaries look: refused, before any install.
(cd "$work" && "$cpack" -G DEB --config "$build_dir/CPackConfig.cmake" -B "$work/moved" \
   -D CPACK_INSTALL_PREFIX=/opt/elsewhere) >"$work/moved.log" 2>&1 && fail "cpack packaged for another prefix"
tr -s ' \n' '  ' <"$work/moved.log" >"$work/moved.oneline"
expect_in "$work/moved.oneline" "configure with -DCMAKE_INSTALL_PREFIX=/opt/elsewhere" "cpack refuses another prefix"
[ ! -e "$work/moved/_CPack_Packages" ] && pass || fail "cpack installed files before refusing another prefix"
debs=("$work"/pkg/*.deb)
expect_equal "${#debs[@]}" 1 "cpack builds one package"
deb=${debs[0]}
arch=$(dpkg --print-architecture)
expect_equal "$(basename "$deb")" "nccltune_${version}_$arch.deb" "the package's file name"
field() { dpkg-deb -f "$deb" "$1"; }
expect_equal "$(field Package)" nccltune "Package:"
expect_equal "$(field Version)" "$version" "Version: is project()'s"
expect_equal "$(field Architecture)" "$arch" "Architecture: is this machine's"
[[ $(field Maintainer) =~ ^[^\<]+\ \<[^\>]+@[^\>]+\>$ ]] && pass || fail "Maintainer: is not 'Name <email>': $(field Maintainer)"
[ "$(field Description | wc -l)" -gt 1 ] && pass || fail "Description: has no long description"
if [ "$prefix" != /usr ]; then  # (CMake wraps the warning's lines)
  tr -s ' \n' '  ' <"$work/cpack.log" >"$work/cpack.oneline"
  expect_in "$work/cpack.oneline" "a Debian package is configured with -DCMAKE_INSTALL_PREFIX=/usr" "cpack warns of prefix $prefix"
fi

# Depends: for every library a dynamically linked file needs, the package that ships it.
depends=$(field Depends)
echo "$test_name: Depends: $depends"
dpkg-deb -c "$deb" >"$work/contents"
mkdir "$work/extracted"
dpkg-deb -x "$deb" "$work/extracted"
elf_files=0
declare -A lib_path needed_by  # soname: the file ld.so picks for it; a packaged file that needs it
while IFS= read -r file; do
  needs=$(LC_ALL=C readelf -d "$file" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
  [ -n "$needs" ] || continue
  elf_files=$((elf_files + 1))
  LC_ALL=C readelf -S "$file" | grep -q '\.debug_' && fail "${file#"$work/extracted"} is not stripped"
  ldd_out=$(env -u LD_LIBRARY_PATH ldd "$file")
  for soname in $needs; do
    lib_path[$soname]=$(awk -v so="$soname" '$1 == so && $2 == "=>" { print $3 } $1 ~ "/" so "$" { print $1 }' <<<"$ldd_out")
    needed_by[$soname]=${file#"$work/extracted"}
  done
done < <(find "$work/extracted" -type f)
for soname in "${!lib_path[@]}"; do
  path=${lib_path[$soname]}
  # dpkg knows the file under one of its names (/lib is /usr/lib).
  owner=$([ -n "$path" ] && { dpkg -S "$path" || dpkg -S "${path#/usr}" || dpkg -S "/usr$path"; } 2>/dev/null |
          head -1 | sed 's/[:,].*//')
  if [ -z "$owner" ]; then fail "${needed_by[$soname]} needs $soname ('$path'), which no installed package ships"
  elif [[ ", $depends," == *", $owner "* || ", $depends," == *", $owner,"* ]]; then pass
  else fail "Depends: lacks $owner (${needed_by[$soname]} needs $soname)"; fi
done
[ "$elf_files" -ge 5 ] && pass || fail "only $elf_files dynamically linked files in the package"

# Every entry root's; nothing of the tests or the fake GPU stack (tests/ installs nothing).
awk '$2 != "root/root" { print "  | " $0; bad = 1 } END { exit bad }' "$work/contents" && pass ||
  fail "entries not owned by root/root"
paths=$(awk '{ print $6 }' "$work/contents" | sed 's#^\.##')
leaked=$(grep -Ei 'fake|gtest|gmock|_unit_tests|_test|bench|fuzz|plugin_loader|png_stats|notify_listener|model_executor|/include/|\.a$' <<<"$paths")
expect_equal "$leaked" "" "no test or fake GPU file in the package"
for bin in bin/nccltune bin/nccltune-env bin/nccltune-worker sbin/nccltuned libexec/nccltune/nccltune-hwloc-xml \
           lib/systemd/system/nccltuned.service share/nccltune/slurm/task_prolog.sh share/nccltune/slurm/prolog.sh \
           share/nccltune/slurm/epilog.sh share/nccltune/slurm/common.sh share/nccltune/slurm/tune.sbatch \
           share/nccltune/slurm/fleet.sbatch share/nccltune/slurm/slurm.conf.snippet; do
  grep -qx "$prefix/$bin" <<<"$paths" && pass || fail "$prefix/$bin is not in the package"
done
for plugin in "${plugins[@]}"; do
  grep -qx "$prefix/lib/$plugin" <<<"$paths" && pass || fail "the plugin $prefix/lib/$plugin is not in the package"
done
grep -qx "$config" <<<"$paths" && pass || fail "the config $config is not in the package"

# Control: the config is the one conffile; ldconfig by trigger; the scripts only reload systemd
# (nothing started or enabled) and not for another root (DPKG_ROOT).
expect_equal "$(dpkg-deb --ctrl-tarfile "$deb" | tar -t | sed 's#^\./##' | grep . | sort | tr '\n' ' ')" \
  "conffiles control md5sums postinst postrm triggers " "control members"
expect_equal "$(dpkg-deb -I "$deb" conffiles)" "$config" "conffiles lists the config the binaries read"
expect_equal "$(dpkg-deb -I "$deb" triggers)" "activate-noawait ldconfig" "ldconfig runs by trigger"
for script in postinst postrm; do
  dpkg-deb -I "$deb" "$script" >"$work/$script"
  expect_equal "$(grep -o 'systemctl.*' "$work/$script")" "systemctl --system daemon-reload >/dev/null || true" \
    "$script runs systemctl daemon-reload only"
  expect_in "$work/$script" '[ -z "${DPKG_ROOT:-}" ]' "$script leaves another root's systemd alone"
done

# --- installed into a scratch root ----------------------------------------------------------------
root=$work/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"
# The scripts run here, not chrooted into the bare root; DPKG_ROOT keeps them off this system.
dpkg_root() {
  dpkg --root="$root" --log="$work/dpkg.log" --force-depends --force-not-root --force-script-chrootless "$@"
}
expect_status 0 "dpkg -i into the scratch root" dpkg_root -i "$deb"
dpkg --root="$root" -s nccltune >"$work/status" 2>&1
expect_in "$work/status" "Status: install ok installed" "dpkg records the package installed"
expect_in "$work/status" " $config " "dpkg records the config as a conffile"
installed=$root$prefix
for bin in bin/nccltune bin/nccltune-env sbin/nccltuned; do
  expect_exit 0 "installed $bin --version" -- env -u LD_LIBRARY_PATH "$installed/$bin" --version
  expect_in "$work/out" "$version" "installed $bin --version"
done
for bin in bin/nccltune bin/nccltune-worker sbin/nccltuned libexec/nccltune/nccltune-hwloc-xml; do
  env -u LD_LIBRARY_PATH ldd "$installed/$bin" >"$work/ldd" 2>&1
  expect_not_in "$work/ldd" "not found" "$bin finds every library it links"
done
env -u LD_LIBRARY_PATH "$installed/bin/nccltune" env --help >"$work/env-help" 2>&1
expect_in "$work/env-help" "$config" "the installed nccltune reads the packaged config"
cmp -s "$root$config" "$source_dir/configs/nccltune.yaml" && pass || fail "the installed config is not configs/nccltune.yaml"
unit=$installed/lib/systemd/system/nccltuned.service
expect_in "$unit" "ExecStart=$prefix/sbin/nccltuned" "the unit names the installed nccltuned"
if ! command -v systemd-analyze >/dev/null; then
  fail "systemd-analyze is not installed (run.sh test installs systemd)"
else
  # verify wants ExecStart= to exist: a copy of the unit points into the scratch root.
  mkdir "$work/verify"
  sed "s#=$prefix/sbin/nccltuned#=$installed/sbin/nccltuned#" "$unit" >"$work/verify/nccltuned.service"
  systemd-analyze verify "$work/verify/nccltuned.service" >"$work/verify.log" 2>&1
  code=$?
  if [ "$code" -eq 0 ] && ! grep -q "nccltuned.service" "$work/verify.log"; then pass
  else fail "systemd-analyze verify (exit $code):"; sed 's/^/  | /' "$work/verify.log"; fi
fi

# An admin's edit survives a reinstall and `dpkg -r`; --purge removes the config and the rest.
echo "# the admin's line" >>"$root$config"
expect_status 0 "dpkg -i again" dpkg_root -i "$deb"
expect_in "$root$config" "# the admin's line" "a reinstall keeps the edited config"
expect_status 0 "dpkg -r" dpkg_root -r nccltune
[ ! -e "$installed/bin/nccltune" ] && pass || fail "dpkg -r left $prefix/bin/nccltune"
expect_in "$root$config" "# the admin's line" "dpkg -r keeps the edited config"
expect_status 0 "dpkg --purge" dpkg_root --purge nccltune
left=$(cd "$root" && find . -mindepth 1 -path ./var -prune -o -print)
expect_equal "$left" "" "nothing of the package left after --purge"
expect_equal "$(dpkg --root="$root" -s nccltune 2>&1 | grep -c '^Status: install ok')" 0 "dpkg no longer lists it"

finish
