#!/usr/bin/env bash
# Configures and builds gemmprof into ${GEMMPROF_BUILD_DIR:-build}. CUDA kernels are
# built when nvcc is found (GEMMPROF_ENABLE_CUDA), for sm_90a and sm_100a.
# usage: deploy/build.sh [--target NAME]... [CMAKE_CONFIGURE_ARGS...]
#   --target NAME (repeatable): build only those targets and what they need (default:
#   everything). The configure step is the same either way, so a later build of
#   everything in the same folder reuses what a targeted one built.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GEMMPROF_BUILD_DIR:-$root/build}
targets=()
while [ $# -ge 2 ] && [ "$1" = --target ]; do
  targets+=("$2")
  shift 2
done
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
if [ ${#targets[@]} -gt 0 ]; then
  cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
else
  cmake --build "$build" -j"$(nproc)"
fi
