# `cpack -G DEB` (or `cpack`) in the build directory: one Debian package,
# nccltune_<version>_<arch>.deb, of everything the install() rules install, every component in
# it, so a rule a subdirectory adds is packaged without a change here. Depends: is read from the
# dynamically linked files by dpkg-shlibdeps (dpkg-dev; CPack finds them with `file`); cpack
# stops when either is missing rather than build a package with no Depends at all.
#
# The package installs into the prefix CMake was configured with, the one compiled into the
# binaries (the config's path, the hwloc reader's), so a Debian package is configured with
# -DCMAKE_INSTALL_PREFIX=/usr (config /etc/nccltune/nccltune.yaml). Another prefix still gives a
# working package in that prefix, config in <prefix>/etc (the tests package the test build that
# way); cpack warns that it is not where Debian puts packages. A prefix set at cpack time would
# move the files away from the paths compiled in: cpack stops.
#
# Installing starts and enables nothing (`systemctl enable --now nccltuned` is the admin's step):
# the only maintainer scripts reload systemd's view of the unit after it changed, when systemd
# runs and dpkg installs into the real root. CPack would otherwise add its own postinst and postrm
# that run ldconfig (plugins in /usr/lib); a dpkg trigger does that instead, for any prefix. The
# config is a conffile: an admin's edits survive upgrades and `dpkg -r`; only --purge removes it.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME nccltune)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(NCCLTUNE_PACKAGE_MAINTAINER "nccltune maintainers <maintainers@users.noreply.a-seed-b9414590.example>"
    CACHE STRING "The Debian package's Maintainer: field (Name <email>)")
set(CPACK_PACKAGE_CONTACT "${NCCLTUNE_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "finds the fastest NCCL settings for a GPU cluster")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION [=[
nccltune reads each node's PCIe, NVLink and NIC topology, checks NIC-GPU
affinity and link health, measures NCCL collectives under mpirun and writes
the fastest settings as profiles. Jobs get them through the NCCL tuner and
env plugins, the Slurm prolog scripts or nccltune-env. The nccltuned daemon
keeps each node's facts and env file current and reports hardware drift.]=])
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# `nccltune tune` and `fleet` run under mpirun; the library alone does not bring it.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS openmpi-bin)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEB_COMPONENT_INSTALL OFF)
set(CPACK_MONOLITHIC_INSTALL ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Stripped, as Debian ships binaries: the debug info is most of their size (a build's line tables
# stay in the build tree).
set(CPACK_STRIP_FILES ON)
# Staged with DESTDIR and the real prefix, as `DESTDIR=... cmake --install` does: the config is
# installed to an absolute path and the unit is written with the installed nccltuned's path. With
# CPack's default (the staging directory as CMAKE_INSTALL_PREFIX) the config would go into this
# machine's /etc instead of the package, and the unit would name the staging directory.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(CPACK_PACKAGING_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
# The package's new directories are 0755 whatever the umask of the machine that builds it: CPack
# takes CMAKE_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS (Install.cmake) as its default.

set(NCCLTUNE_PACKAGING_DIR "${PROJECT_BINARY_DIR}/packaging")
file(CONFIGURE OUTPUT "${NCCLTUNE_PACKAGING_DIR}/conffiles" CONTENT "${NCCLTUNE_CONFIG_FILE}\n")
file(CONFIGURE OUTPUT "${NCCLTUNE_PACKAGING_DIR}/triggers" CONTENT "activate-noawait ldconfig\n")
# DPKG_ROOT is set when dpkg installs into another root (dpkg --root): not this system's systemd.
foreach(script_action IN ITEMS "postinst;configure" "postrm;remove")
  list(GET script_action 0 script)
  list(GET script_action 1 action)
  file(CONFIGURE OUTPUT "${NCCLTUNE_PACKAGING_DIR}/${script}" @ONLY CONTENT [=[
#!/bin/sh
set -e
if [ "$1" = "@action@" ] && [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
  systemctl --system daemon-reload >/dev/null || true
fi
]=])
endforeach()
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA "${NCCLTUNE_PACKAGING_DIR}/conffiles" "${NCCLTUNE_PACKAGING_DIR}/triggers"
    "${NCCLTUNE_PACKAGING_DIR}/postinst" "${NCCLTUNE_PACKAGING_DIR}/postrm")
# Scripts 0755, the rest 0644, whatever the umask.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

# Read by cpack itself, at packaging time: the checks above.
file(CONFIGURE OUTPUT "${NCCLTUNE_PACKAGING_DIR}/CPackProjectConfig.cmake" @ONLY CONTENT [=[
if(CPACK_GENERATOR STREQUAL "DEB")
  foreach(tool IN ITEMS dpkg-shlibdeps file)
    find_program(NCCLTUNE_${tool} ${tool})
    if(NOT NCCLTUNE_${tool})
      message(FATAL_ERROR "nccltune: ${tool} is not installed; without it the package would have no "
                          "Depends: (apt-get install dpkg-dev file)")
    endif()
  endforeach()
  if(NOT CPACK_INSTALL_PREFIX STREQUAL "@CMAKE_INSTALL_PREFIX@")
    message(FATAL_ERROR "nccltune: the binaries were built for prefix @CMAKE_INSTALL_PREFIX@ (they read "
                        "@NCCLTUNE_CONFIG_FILE@); configure with -DCMAKE_INSTALL_PREFIX=${CPACK_INSTALL_PREFIX} "
                        "to package for ${CPACK_INSTALL_PREFIX}")
  endif()
  if(NOT CPACK_INSTALL_PREFIX STREQUAL "/usr")
    message(WARNING "nccltune: this package installs into @CMAKE_INSTALL_PREFIX@ (config "
                    "@NCCLTUNE_CONFIG_FILE@); a Debian package is configured with -DCMAKE_INSTALL_PREFIX=/usr")
  endif()
endif()
]=])
set(CPACK_PROJECT_CONFIG_FILE "${NCCLTUNE_PACKAGING_DIR}/CPackProjectConfig.cmake")

include(CPack)
