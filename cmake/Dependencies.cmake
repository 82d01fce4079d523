# Every dependency comes from Debian 12's packages (see ci/install-deps.sh).
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS unit_test_framework)
find_package(rapidcheck REQUIRED)
find_package(libcuckoo REQUIRED)
pkg_check_modules(ISAL REQUIRED IMPORTED_TARGET libisal)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
pkg_check_modules(TOMLPP REQUIRED IMPORTED_TARGET tomlplusplus)
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
# rdma-core for the verbs backend (libibverbs-dev, librdmacm-dev). Optional:
# without them the verbs backend, its CLI wiring and its tests are left out.
pkg_check_modules(IBVERBS QUIET IMPORTED_TARGET libibverbs)
pkg_check_modules(RDMACM QUIET IMPORTED_TARGET librdmacm)
if(IBVERBS_FOUND AND RDMACM_FOUND)
  set(LOCUS_HAVE_VERBS ON)
else()
  set(LOCUS_HAVE_VERBS OFF)
  message(STATUS "libibverbs/librdmacm not found: building without the verbs backend (ci/install-deps.sh installs them)")
endif()
# ZooKeeper's multi-threaded C client (libzookeeper-mt-dev) for membership
# and the region map (backends/zookeeper, docs/membership.md). Required: a
# build that silently lacked it would leave `locus serve --zookeeper` out.
find_path(ZOOKEEPER_INCLUDE_DIR zookeeper/zookeeper.h)
find_library(ZOOKEEPER_LIBRARY zookeeper_mt)
if(NOT ZOOKEEPER_INCLUDE_DIR OR NOT ZOOKEEPER_LIBRARY)
  message(FATAL_ERROR "ZooKeeper's C client not found (zookeeper/zookeeper.h: ${ZOOKEEPER_INCLUDE_DIR}, "
                      "libzookeeper_mt: ${ZOOKEEPER_LIBRARY}): install Debian's libzookeeper-mt-dev "
                      "(ci/install-deps.sh does)")
endif()
add_library(ZooKeeper::zookeeper_mt UNKNOWN IMPORTED)
# THREADED: the mt library's synchronous calls are declared only with it.
set_target_properties(ZooKeeper::zookeeper_mt PROPERTIES
  IMPORTED_LOCATION "${ZOOKEEPER_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${ZOOKEEPER_INCLUDE_DIR}"
  INTERFACE_COMPILE_DEFINITIONS THREADED)
