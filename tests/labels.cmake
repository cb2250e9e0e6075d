# ctest LABELS of the gtest binaries' tests, by test name (docs/contributing.md "Test
# labels"). Not a CMake module: ctest runs this file when it reads the test list, once per
# test binary, right after gtest_discover_tests' file has added that binary's tests.
# seer_add_test_binary (tests/CMakeLists.txt) writes the per-binary stub that sets
#   SEER_LABEL_TESTS    the binary's discovered test names (gtest_discover_tests' TEST_LIST)
#   SEER_LABEL_DEFAULT  the binary's label: unit, or cli for the binaries that run the
#                       `seer` CLI (RUNS_CLI)
# and then includes this file, which labels every test of the binary: a test whose name
# matches a pattern below gets those labels instead of `unit` (so `ctest -L unit` stays
# the fast set; cli tests keep `cli`), every other test gets the default. This is the one
# place that sets these tests' LABELS (ctest appends to LABELS, it never replaces them).
#   gpu   needs a CUDA device to exercise anything (skips without one)
#   dist  runs several ranks (threads or processes joined by c10d)
#   slow  takes long on 2 cores (whole trainings, multi-second oracles)
# Patterns are CMake regexes over "Suite.Name" (parameterized: "Prefix/Suite.Name/Param").
set(_seer_gpu_tests "Cuda|GpuMatches")
set(_seer_dist_tests "^(Distributed|ProcessGroup|DistCli)[A-Za-z0-9_]*\\.|Nproc")
set(_seer_slow_tests "PeakRssStaysWithinBudget|^LargeOffsetsCliTest\\.|^CscBuilderTest\\.SegmentedWritesMatchOracle$")

foreach(_seer_test IN LISTS SEER_LABEL_TESTS)
  set(_seer_labels)
  foreach(_seer_label gpu dist slow)
    if(_seer_test MATCHES "${_seer_${_seer_label}_tests}")
      list(APPEND _seer_labels ${_seer_label})
    endif()
  endforeach()
  if(NOT _seer_labels OR SEER_LABEL_DEFAULT STREQUAL "cli")
    list(INSERT _seer_labels 0 ${SEER_LABEL_DEFAULT})
  endif()
  set_tests_properties("${_seer_test}" PROPERTIES LABELS "${_seer_labels}")
endforeach()
