# Packaging: the man page ovpnd(8) and the Debian package (`cpack -G DEB` in the build
# directory). Included from the top-level CMakeLists.txt after the install rules of the targets.

# ovpnd(8) from docs/ovpnd.8.scd, with scdoc when it is installed (Debian: scdoc); part of `all`.
find_program(SCDOC_EXECUTABLE scdoc)
if(SCDOC_EXECUTABLE)
  set(OVPND_MAN_SRC ${CMAKE_SOURCE_DIR}/docs/ovpnd.8.scd)
  add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/ovpnd.8 ${CMAKE_BINARY_DIR}/ovpnd.8.gz
    COMMAND sh -c "'${SCDOC_EXECUTABLE}' < '${OVPND_MAN_SRC}' > ovpnd.8 && gzip -9n < ovpnd.8 > ovpnd.8.gz"
    DEPENDS ${OVPND_MAN_SRC}
    WORKING_DIRECTORY ${CMAKE_BINARY_DIR}
    COMMENT "Rendering the man page ovpnd(8)"
    VERBATIM)
  add_custom_target(man ALL DEPENDS ${CMAKE_BINARY_DIR}/ovpnd.8.gz)
  install(FILES ${CMAKE_BINARY_DIR}/ovpnd.8.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man8)
else()
  message(STATUS "scdoc not found: the man page ovpnd(8) is not built (scripts/install-deps.sh)")
endif()

# Besides the binary, the plugins, the unit and the sample config (installed where their targets
# are defined): the logrotate file, an empty log directory for it, and the documentation.
# /etc and /var for the prefix /usr (GNUInstallDirs), else under the prefix
install(FILES contrib/ovpnd.logrotate DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/logrotate.d
        RENAME ovpnd)
install(DIRECTORY DESTINATION ${CMAKE_INSTALL_FULL_LOCALSTATEDIR}/log/ovpnd)
install(FILES README.md docs/pki.md docs/install.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES sample-config/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ovpnd)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "ovpnd developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "multi-threaded server for the OpenVPN protocol")
# (the summary above is its first line)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "ovpnd serves stock OpenVPN 2.4+ clients and OpenVPN Connect over UDP and TCP\n\
from OpenVPN 2.6 server configs, with data-channel worker threads, tls-crypt-v2,\n\
plugins, the management interface and a client profile generator (ovpnd profile).")
# The package installs under the configured prefix, which the unit's ExecStart was rendered
# with: configure with -DCMAKE_INSTALL_PREFIX=/usr for a Debian package (docs/install.md).
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  message(STATUS "cpack -G DEB would install under ${CMAKE_INSTALL_PREFIX}; for a Debian \
package configure with -DCMAKE_INSTALL_PREFIX=/usr")
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends: from the shared libraries the binary and plugins link (dpkg-shlibdeps, dpkg-dev).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "logrotate")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "easy-rsa, openvpn")
# Files under /etc are the admin's once installed: dpkg keeps their edits on upgrade.
file(WRITE ${CMAKE_BINARY_DIR}/debian/conffiles "${CMAKE_INSTALL_FULL_SYSCONFDIR}/logrotate.d/ovpnd\n")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/debian/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
