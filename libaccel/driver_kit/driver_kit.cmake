# The driver kit: what every driver (emulator, bpu, vart) does the same way, written once: the guarded
# function table and entry point, the entry points' declarations, failure reporting, buffer checks and
# copies, run options, job waits. It is internal: never installed, never part of libaccel's ABI, and libaccel does
# not use it.
#
# A driver links it with target_link_libraries(<driver> PRIVATE accel_driver_kit): its sources are
# compiled into the driver with the driver's own flags, so that each driver (a library of its own)
# keeps its own copy of the kit's state (the loader's host API). The kit includes libaccel's URI grammar
# (libaccel/common/uri_grammar.c, hidden symbols): a driver splits its options with the code
# accel_uri_parse runs without calling libaccel, which it does not link and may be older than it.
include_guard(GLOBAL)
add_library(accel_driver_kit INTERFACE)
target_include_directories(accel_driver_kit INTERFACE "${CMAKE_CURRENT_LIST_DIR}/include"
  "${CMAKE_CURRENT_LIST_DIR}/../common")
target_sources(accel_driver_kit INTERFACE
  "${CMAKE_CURRENT_LIST_DIR}/status.cc"
  "${CMAKE_CURRENT_LIST_DIR}/handle.cc"
  "${CMAKE_CURRENT_LIST_DIR}/buffer_copy.cc"
  "${CMAKE_CURRENT_LIST_DIR}/buffer_checks.cc"
  "${CMAKE_CURRENT_LIST_DIR}/run_options.cc"
  "${CMAKE_CURRENT_LIST_DIR}/options.cc"
  "${CMAKE_CURRENT_LIST_DIR}/../common/uri_grammar.c")
