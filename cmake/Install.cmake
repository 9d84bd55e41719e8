# The directories an install creates, and the package's (Packaging.cmake), are 0755 whatever the
# installer's umask: under umask 002 they came out group-writable, and share/nccltune/slurm holds
# the scripts slurmd runs as root.
set(CMAKE_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

# `cmake --install`: nccltuned, its systemd unit and the node config in the standard places
# (GNUInstallDirs), as the component `daemon`. The config goes to NCCLTUNE_CONFIG_FILE, the one
# path compiled into every binary and the tuner plugin: the sysconfdir of the prefix CMake was
# configured with (/etc/nccltune for -DCMAKE_INSTALL_PREFIX=/usr, <prefix>/etc/nccltune
# otherwise). `cmake --install --prefix DIR` moves the binaries but not what they were built to
# read, so the config still goes where they read it, and a message says so. The unit is
# configured at install time with the installed nccltuned.
install(TARGETS nccltuned RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR} COMPONENT daemon)
install(CODE "
  set(NCCLTUNE_SBIN_DIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_SBINDIR}\")
  set(NCCLTUNE_CONFIG_FILE \"${NCCLTUNE_CONFIG_FILE}\")
  if(NOT CMAKE_INSTALL_PREFIX STREQUAL \"${CMAKE_INSTALL_PREFIX}\")
    message(STATUS \"nccltune: installing into \${CMAKE_INSTALL_PREFIX}, but the binaries read their config at \${NCCLTUNE_CONFIG_FILE} (configured prefix ${CMAKE_INSTALL_PREFIX}); the config goes there. Configure with -DCMAKE_INSTALL_PREFIX=\${CMAKE_INSTALL_PREFIX} to move it.\")
  endif()
  # One copy per install prefix (its ExecStart names it): installs of this tree into several
  # prefixes at once (the tests, cpack) never write one file.
  string(MD5 prefix_hash \"\${CMAKE_INSTALL_PREFIX}\")
  set(unit \"${PROJECT_BINARY_DIR}/systemd/\${prefix_hash}/nccltuned.service\")
  configure_file(\"${PROJECT_SOURCE_DIR}/systemd/nccltuned.service.in\" \"\${unit}\" @ONLY)
  file(INSTALL \"\${unit}\" DESTINATION \"\${CMAKE_INSTALL_PREFIX}/lib/systemd/system\")
  # An admin's edited config survives a reinstall: the shipped one is installed only when absent.
  if(EXISTS \"\$ENV{DESTDIR}\${NCCLTUNE_CONFIG_FILE}\")
    message(STATUS \"Keeping: \$ENV{DESTDIR}\${NCCLTUNE_CONFIG_FILE}\")
  else()
    file(INSTALL \"${PROJECT_SOURCE_DIR}/configs/nccltune.yaml\" DESTINATION \"${CMAKE_INSTALL_FULL_SYSCONFDIR}/nccltune\")
  endif()" COMPONENT daemon)

# The Slurm scripts (configs/slurm/), for slurm.conf's TaskProlog=, Prolog= and Epilog= to name
# in place or to copy to /etc; they find common.sh next to themselves. The batch templates of
# tune, fleet and the NCCL upgrade check go beside them, for
# `sbatch <prefix>/share/nccltune/slurm/fleet.sbatch`.
install(PROGRAMS configs/slurm/task_prolog.sh configs/slurm/prolog.sh configs/slurm/epilog.sh
        configs/slurm/tune.sbatch configs/slurm/fleet.sbatch configs/slurm/nccl-upgrade.sbatch
        DESTINATION ${CMAKE_INSTALL_DATADIR}/nccltune/slurm COMPONENT slurm)
install(FILES configs/slurm/common.sh configs/slurm/slurm.conf.snippet
        DESTINATION ${CMAKE_INSTALL_DATADIR}/nccltune/slurm COMPONENT slurm)
