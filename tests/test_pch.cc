// The file gemmprof_test_pch is built from: its precompiled header (tests/CMakeLists.txt)
// is what the test programs reuse.
