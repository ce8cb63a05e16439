#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs every test but the ones
# labelled gpu (those run on a GPU node: see README, "On a GPU node").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/deploy/install_deps.sh"
# Everything (tests and benchmarks too); after run_demo.sh only what the demo did not
# build compiles.
"$root/deploy/build.sh"
cd "${GEMMPROF_BUILD_DIR:-$root/build}"
ctest -LE gpu --output-on-failure -j"$(nproc)" --timeout 600
