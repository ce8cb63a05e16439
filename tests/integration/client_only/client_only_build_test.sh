#!/usr/bin/env bash
# A client-only configure and build, through deploy/make_client_bundle.sh, with SQLite,
# spdlog and CUDA made unfindable: it must succeed, never look for a CUDA compiler, and
# compile nothing from server/ or kernels/ (only proto/, core/, report/, wire/ and client/).
# Leaves the bundle in OUT for client_bundle_test.sh (ctest fixture client_bundle).
# usage: client_only_build_test.sh SOURCE_DIR BUILD_DIR OUT_DIR
set -euo pipefail
src=${1:?usage: client_only_build_test.sh SOURCE_DIR BUILD_DIR OUT_DIR}
build=${2:?}
out=${3:?}
fail() { echo "FAIL: $*" >&2; exit 1; }

# A fresh configure every run (objects are kept and reused): a cache left from an
# earlier configure would hide a CUDA probe or a found package.
rm -f "$build/CMakeCache.txt"
# Built without optimisation or debug info (build type None): this test checks what
# compiles and links, and the client-bundle test runs the result; -O2 would only make it
# about a third slower (228 s against 153 s cold on 2 cores).
start=$SECONDS
GEMMPROF_CLIENT_BUILD=$build GEMMPROF_CLIENT_BUILD_TYPE=None \
  "$src/deploy/make_client_bundle.sh" "$out"
echo "configure + build + pack: $((SECONDS - start)) s"

log=$build/gemmprof-configure.log
cache=$build/CMakeCache.txt
if grep -Ei 'CUDA compiler|nvcc' "$log"; then fail "the client-only configure looked for CUDA"; fi
if grep -E '^CMAKE_CUDA_COMPILER' "$cache"; then fail "CMAKE_CUDA_COMPILER is in the cache"; fi
grep -q '^GEMMPROF_CLIENT_ONLY:BOOL=ON$' "$cache" || fail "GEMMPROF_CLIENT_ONLY is not ON"
if grep -E '^(spdlog_DIR|SQLite3_[A-Z_]*):' "$cache" | grep -v NOTFOUND; then
  fail "spdlog or SQLite3 was found"
fi

targets=$(cmake --build "$build" --target help)
if echo "$targets" | grep -E 'gemmprofd|gemmprof_(storage|device|queue|api|kernels)'; then
  fail "the client-only build defines server or kernel targets"
fi
for dir in server kernels tests bench; do
  [ ! -e "$build/$dir" ] || fail "$build/$dir exists: something from $dir/ was configured"
done
objects=$(find "$build" -name '*.o' -not -path '*/CMakeFiles/[0-9]*' | sed "s,^$build/,,")
[ -n "$objects" ] || fail "no object files under $build"
if echo "$objects" | grep -Ev '^(proto|core|report|wire|client)/'; then
  fail "objects compiled outside proto/, core/, report/, wire/ and client/"
fi
echo "$(echo "$objects" | wc -l) objects, all from proto/ core/ report/ wire/ client/"
[ -x "$out/bin/gemmprof" ] || fail "no $out/bin/gemmprof"
echo "client-only build: ok"
