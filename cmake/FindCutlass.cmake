# Finds CUTLASS (header-only) as deploy/install_cutlass.sh installs it: the PyPI wheel
# `nvidia-cutlass` unpacked into its own folder, whose cutlass_library/source holds
# include/ and tools/util/include/. Looked for in CUTLASS_ROOT (CMake or environment),
# GEMMPROF_CUTLASS_DIR, then ~/.cache/gemmprof/nvidia-cutlass-<version>; a plain CUTLASS
# checkout (include/, tools/util/include/) works through CUTLASS_ROOT too.
#
# Defines Cutlass_FOUND, Cutlass_VERSION, Cutlass_INCLUDE_DIR and the INTERFACE target
# Cutlass::Cutlass (both include folders).
set(_cutlass_hints ${CUTLASS_ROOT} $ENV{CUTLASS_ROOT} $ENV{GEMMPROF_CUTLASS_DIR}
    "$ENV{HOME}/.cache/gemmprof/nvidia-cutlass-4.2.0.0")
find_path(Cutlass_INCLUDE_DIR cutlass/version.h
  HINTS ${_cutlass_hints}
  PATH_SUFFIXES cutlass_library/source/include include
  NO_DEFAULT_PATH)
if(Cutlass_INCLUDE_DIR)
  get_filename_component(_cutlass_source "${Cutlass_INCLUDE_DIR}" DIRECTORY)
  find_path(Cutlass_UTIL_INCLUDE_DIR cutlass/util/packed_stride.hpp
    HINTS "${_cutlass_source}/tools/util/include" NO_DEFAULT_PATH)
  file(STRINGS "${Cutlass_INCLUDE_DIR}/cutlass/version.h" _cutlass_defines
       REGEX "^#define CUTLASS_(MAJOR|MINOR|PATCH) [0-9]+")
  foreach(_part MAJOR MINOR PATCH)
    string(REGEX REPLACE ".*#define CUTLASS_${_part} ([0-9]+).*" "\\1" _cutlass_${_part}
           "${_cutlass_defines}")
  endforeach()
  set(Cutlass_VERSION "${_cutlass_MAJOR}.${_cutlass_MINOR}.${_cutlass_PATCH}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Cutlass
  REQUIRED_VARS Cutlass_INCLUDE_DIR Cutlass_UTIL_INCLUDE_DIR
  VERSION_VAR Cutlass_VERSION)
if(Cutlass_FOUND AND NOT TARGET Cutlass::Cutlass)
  add_library(Cutlass::Cutlass INTERFACE IMPORTED)
  target_include_directories(Cutlass::Cutlass SYSTEM INTERFACE
    "${Cutlass_INCLUDE_DIR}" "${Cutlass_UTIL_INCLUDE_DIR}")
endif()
mark_as_advanced(Cutlass_INCLUDE_DIR Cutlass_UTIL_INCLUDE_DIR)
