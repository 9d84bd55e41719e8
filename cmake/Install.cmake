# `cmake --install`: nccltuned, its systemd unit and the node config in the standard places
# (GNUInstallDirs), as the component `daemon`. The unit is configured at install time, so it
# names the binary and config of this install even when `cmake --install --prefix DIR` moves it;
# with prefix /usr the config goes to /etc/nccltune (GNUInstallDirs' rule), otherwise to
# <prefix>/etc/nccltune.
include(GNUInstallDirs)

install(TARGETS nccltuned RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR} COMPONENT daemon)
install(CODE "
  set(NCCLTUNE_SBIN_DIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_SBINDIR}\")
  if(CMAKE_INSTALL_PREFIX STREQUAL \"${CMAKE_INSTALL_PREFIX}\")
    set(sysconf_dir \"${CMAKE_INSTALL_FULL_SYSCONFDIR}\")
  elseif(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
    set(sysconf_dir /etc)
  else()
    set(sysconf_dir \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_SYSCONFDIR}\")
  endif()
  set(NCCLTUNE_CONFIG_FILE \"\${sysconf_dir}/nccltune/nccltune.yaml\")
  configure_file(\"${PROJECT_SOURCE_DIR}/systemd/nccltuned.service.in\" \"${PROJECT_BINARY_DIR}/systemd/nccltuned.service\" @ONLY)
  file(INSTALL \"${PROJECT_BINARY_DIR}/systemd/nccltuned.service\" DESTINATION \"\${CMAKE_INSTALL_PREFIX}/lib/systemd/system\")
  # An admin's edited config survives a reinstall: the shipped one is installed only when absent.
  if(EXISTS \"\$ENV{DESTDIR}\${NCCLTUNE_CONFIG_FILE}\")
    message(STATUS \"Keeping: \$ENV{DESTDIR}\${NCCLTUNE_CONFIG_FILE}\")
  else()
    file(INSTALL \"${PROJECT_SOURCE_DIR}/configs/nccltune.yaml\" DESTINATION \"\${sysconf_dir}/nccltune\")
  endif()" COMPONENT daemon)

# The Slurm scripts (configs/slurm/), for slurm.conf's TaskProlog=, Prolog= and Epilog= to name
# in place or to copy to /etc; they find common.sh next to themselves.
install(PROGRAMS configs/slurm/task_prolog.sh configs/slurm/prolog.sh configs/slurm/epilog.sh
        DESTINATION ${CMAKE_INSTALL_DATADIR}/nccltune/slurm COMPONENT slurm)
install(FILES configs/slurm/common.sh configs/slurm/slurm.conf.snippet
        DESTINATION ${CMAKE_INSTALL_DATADIR}/nccltune/slurm COMPONENT slurm)
