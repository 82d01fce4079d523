# Which tests a build is for. A sanitizer preset leaves out the tests that
# gain nothing from its instrumentation (CMakePresets.json sets
# LOCUS_SKIP_LABELS, and its test preset leaves the same labels out), and
# the target tests_selected builds only what the remaining tests run, so
# that preset compiles nothing it does not test.
set(LOCUS_SKIP_LABELS "" CACHE STRING "Test labels this build leaves out of tests_selected (a ;-list)")

# locus_test_needs(TARGETS ... [LABELS ...]): tests labelled LABELS run
# TARGETS; they join tests_selected unless a label is in LOCUS_SKIP_LABELS.
function(locus_test_needs)
  cmake_parse_arguments(N "" "" "TARGETS;LABELS" ${ARGN})
  foreach(label ${N_LABELS})
    if(label IN_LIST LOCUS_SKIP_LABELS)
      return()
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY LOCUS_SELECTED_TEST_TARGETS ${N_TARGETS})
endfunction()

# locus_add_selected_tests_target(): tests_selected, once every test is known.
function(locus_add_selected_tests_target)
  get_property(targets GLOBAL PROPERTY LOCUS_SELECTED_TEST_TARGETS)
  add_custom_target(tests_selected)
  if(targets)
    list(REMOVE_DUPLICATES targets)
    add_dependencies(tests_selected ${targets})
  endif()
endfunction()

# locus_add_test(NAME SOURCES... [LIBS ...] [LABELS ...])
# One Boost.Test executable registered with CTest under NAME.
function(locus_add_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES} ${T_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE locus_test_support ${T_LIBS})
  add_test(NAME ${name} COMMAND ${name} --log_level=message --report_level=short)
  if(T_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}")
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT 600)
  locus_test_needs(TARGETS ${name} LABELS ${T_LABELS})
endfunction()
