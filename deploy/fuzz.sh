#!/usr/bin/env bash
# Fuzzes gemmprof's input paths with libFuzzer under AddressSanitizer and
# UndefinedBehaviorSanitizer (tests/fuzz: shape and sweep text, recipe and routing strings,
# config.json, the client's flags and config file, a SubmitJobRequest off the wire, the
# HTTP API's queries, gemmprofd's tokens file, a worker's answer). Builds with clang into
# ${GEMMPROF_FUZZ_BUILD_DIR:-build-fuzz}, without CUDA; installs clang and its fuzzer
# runtime when missing.
#
# usage: deploy/fuzz.sh [--seconds N] [--tests] [TARGET...]
#   --seconds N  how long each target runs (default 60)
#   --tests      also run the tests not labelled gpu in the sanitized build first (but
#                five whose time bounds assume an unsanitized build; listed below)
#   TARGET       the targets to run (default: all of them)
# Each target starts from its checked-in corpus (tests/fuzz/corpus/NAME) plus what earlier
# runs here found (build-fuzz/corpus/NAME). An input that breaks a property, crashes,
# leaks, takes over 20 s or 2 GiB is saved as build-fuzz/findings/NAME/crash-*
# (timeout-*, oom-*); copy it into tests/fuzz/corpus/NAME once fixed, so the unit tests
# replay it. Last line: "N passed, M failed" (targets).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GEMMPROF_FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=60
run_tests=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
    --tests) run_tests=1; shift ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
case "$seconds" in
  ''|*[!0-9]*) echo "fuzz.sh: --seconds '$seconds' is not a whole number of seconds" >&2; exit 2 ;;
esac
all=()
for f in "$root"/tests/fuzz/*_fuzz.cc; do all+=("$(basename "$f" .cc)"); done
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
for t in "${targets[@]}"; do
  [ -f "$root/tests/fuzz/$t.cc" ] || { echo "fuzz.sh: no target '$t' (targets: ${all[*]})" >&2; exit 2; }
done

"$root/deploy/install_deps.sh" clang libclang-rt-dev
# Leaks inside third-party libraries LSan cannot see into (tests/fuzz/lsan_suppressions.txt).
export LSAN_OPTIONS="suppressions=$root/tests/fuzz/lsan_suppressions.txt:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
build_args=(-DCMAKE_CXX_COMPILER=clang++ -DGEMMPROF_ENABLE_CUDA=OFF -DGEMMPROF_BUILD_BENCH=OFF
            -DGEMMPROF_FUZZ=ON "-DGEMMPROF_SANITIZE=address;undefined")
if [ $run_tests = 1 ]; then
  GEMMPROF_BUILD_DIR="$build" "$root/deploy/build.sh" "${build_args[@]}"
  # Tests whose wall-clock bounds assume an unsanitized build: the host runner's GEMMs run
  # several times slower under ASan, so a kill, a lease or a cancel lands past its bound
  # (measured: no sanitizer report in any of them, each passing without sanitizers).
  slow='KillNineThenRestartKeepsResultsAndFinishesTheJob|CancelStopsAWorkingMeasurementAtARoundBoundary'
  slow+='|AKilledDaemonsBatchesAreMeasuredByTheOtherWithinTheLease'
  slow+='|ASmallJobOfAnotherSubmitterIsNotStuckBehindALargeOne|PostgresStoppedMidJobCostsWaitingNotResults'
  (cd "$build" && ctest -LE gpu -E "$slow" --output-on-failure -j"$(nproc)" --timeout 900)
else
  target_args=()
  for t in "${targets[@]}"; do target_args+=(--target "$t"); done
  GEMMPROF_BUILD_DIR="$build" "$root/deploy/build.sh" "${target_args[@]}" "${build_args[@]}"
fi

passed=0
failed=0
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"
  findings="$build/findings/$t"
  mkdir -p "$corpus" "$findings"
  log="$build/findings/$t.log"
  # Leaks are reported by ASan at exit; a finding is written where -artifact_prefix says.
  # 20 s: the sanitizers run the code about six times slower, and a plan at its routing
  # bound derives in about half a second unsanitized, several times per input.
  if "$build/tests/fuzz/$t" "$corpus" "$root/tests/fuzz/corpus/$t" \
       -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=4096 \
       -artifact_prefix="$findings/" -print_final_stats=1 >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    echo "$t: ${runs:-?} inputs run in ${seconds} s, nothing found"
    passed=$((passed + 1))
  else
    echo "$t: FOUND a failing input: $(ls -t "$findings" | head -n 1) (log: $log)"
    grep -m 3 -E 'ERROR|FUZZ_CHECK|runtime error|SUMMARY' "$log" | sed 's/^/  /' || true
    failed=$((failed + 1))
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ $failed -eq 0 ]
