# cpp-httplib for hearth-server and the remote-endpoint client: its CMake
# package where a distribution ships one, else pkg-config (Debian's
# libcpp-httplib-dev, a compiled library whose .pc also carries the feature
# defines that must match it, OpenSSL's included). Sets hearth_httplib to the
# target, or leaves it empty: without it the server and the remote client are
# skipped, so engine-only machines (the GPU test box) still configure.
find_package(httplib CONFIG QUIET)
if(TARGET httplib::httplib)
  set(hearth_httplib httplib::httplib)
else()
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(HTTPLIB QUIET IMPORTED_TARGET GLOBAL cpp-httplib)
  endif()
  if(TARGET PkgConfig::HTTPLIB)
    set(hearth_httplib PkgConfig::HTTPLIB)
  endif()
endif()
if(NOT hearth_httplib)
  message(STATUS "cpp-httplib not found (libcpp-httplib-dev): hearth-server and remote endpoints are not built")
endif()
