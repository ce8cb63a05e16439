#!/usr/bin/env bash
# Builds gemmprof with CUDA (sm_90a + sm_100a) and packs a relocatable bundle for a GPU
# node that lacks gRPC/protobuf/spdlog/SQLite development files:
#   bundle/bin  daemon, CLI, test and benchmark programs, RPATH $ORIGIN/../lib
#   bundle/lib  their non-system shared libraries (not glibc, libstdc++, libcuda,
#               cuBLAS/cuBLASLt, cudart or NVML, which the node's driver and CUDA provide),
#               and CUPTI (libcupti.so.13) for nodes whose toolkit lacks it
#   bundle/run_gpu_tests.sh  runs every gpu test program and prints "N passed, M failed"
# On the node: export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib
# Usage: deploy/make_bundle.sh [cmake targets...]   (default: all)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GEMMPROF_BUNDLE_BUILD:-$root/build-bundle}
out=${GEMMPROF_BUNDLE_DIR:-$root/bundle}
command -v patchelf >/dev/null || { echo "make_bundle: needs patchelf (apt-get install patchelf)" >&2; exit 1; }

cmake -S "$root" -B "$build" -DGEMMPROF_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES="90a;100a" >/dev/null
if [ $# -gt 0 ]; then
  cmake --build "$build" -j"$(nproc)" --target "$@"
else
  cmake --build "$build" -j"$(nproc)"
fi

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
# Executables built by the project (CMake's own probes live under CMakeFiles/; the
# client-only build that tests/integration/client_only makes lives under client-only/).
find "$build" \( -path '*/CMakeFiles' -o -path "$build/client-only" \) -prune -o \
  -type f -perm -u+x -print |
  while read -r f; do
    if file -b "$f" | grep -q '^ELF.*executable'; then cp "$f" "$out/bin/"; fi
  done

system_lib='^(libc|libm|libdl|librt|libpthread|ld-linux.*|libstdc\+\+|libgcc_s|libcuda|libcublas|libcublasLt|libcudart|libnvidia-ml|libnvrtc)\.so'
for f in "$out"/bin/*; do
  ldd "$f" | awk '/=> \//{print $3}'
done | sort -u | while read -r lib; do
  name=$(basename "$lib")
  if ! [[ $name =~ $system_lib ]]; then cp -L "$lib" "$out/lib/$name"; fi
done
# Symbols are not needed on the node, and the bundle must stay small enough to carry.
strip --strip-unneeded "$out"/bin/* "$out"/lib/*
for f in "$out"/bin/*; do patchelf --set-rpath '$ORIGIN/../lib' "$f"; done
for f in "$out"/lib/*; do patchelf --set-rpath '$ORIGIN' "$f"; done
# CUPTI for `--timing kernels`, loaded at run time: the node's toolkit copy comes first
# (LD_LIBRARY_PATH), this one where the node lacks it. NVIDIA's file is kept as shipped.
nvcc=$(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
cuda_bin=$(dirname "$(readlink -f "$nvcc")")
cupti=$(find -L "$cuda_bin/.." -name 'libcupti.so.13' -print -quit 2>/dev/null || true)
if [ -n "$cupti" ]; then
  cp -L "$cupti" "$out/lib/"
else
  echo "make_bundle: libcupti.so.13 not found under $cuda_bin/..: --timing kernels will need the node's" >&2
fi

cat >"$out/run_gpu_tests.sh" <<'RUN'
#!/usr/bin/env bash
# Runs every gpu-labelled test program in this bundle; last line: "N passed, M failed".
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda-13.0/targets/x86_64-linux/lib}
passed=0; failed=0
for t in "$here"/bin/gpu_*_test; do
  [ -x "$t" ] || continue
  out=$("$t" --gtest_brief=1 2>&1); rc=$?
  echo "$out"
  p=$(echo "$out" | sed -n 's/.*\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -1)
  f=$(echo "$out" | sed -n 's/.*\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -1)
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0}))
  if [ $rc -ne 0 ] && [ -z "$f" ]; then failed=$((failed + 1)); echo "$(basename "$t") exited $rc"; fi
done
echo "gpu tests: $passed passed, $failed failed"
[ $failed -eq 0 ]
RUN
chmod +x "$out/run_gpu_tests.sh"
du -sh "$out" | awk '{print "bundle: " $1 " in " $2}'
