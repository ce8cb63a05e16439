#!/usr/bin/env bash
# Configures and builds gemmprof into ${GEMMPROF_BUILD_DIR:-build}. CUDA kernels are
# built when nvcc is found (GEMMPROF_ENABLE_CUDA), for sm_90a and sm_100a.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GEMMPROF_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
