#!/usr/bin/env bash
# Installs CUTLASS, header-only, from its PyPI wheel `nvidia-cutlass` at the pinned
# version into a folder of its own (no Python environment is touched), where CMake's
# cmake/FindCutlass.cmake looks: $GEMMPROF_CUTLASS_DIR, default
# ~/.cache/gemmprof/nvidia-cutlass-<version>. Only CUDA builds use it; install_deps.sh
# calls this when nvcc is present. Idempotent: an installed copy is kept.
set -euo pipefail
version=4.2.0.0
dir=${GEMMPROF_CUTLASS_DIR:-${HOME:-/root}/.cache/gemmprof/nvidia-cutlass-$version}
header="$dir/cutlass_library/source/include/cutlass/version.h"
if [ -f "$header" ]; then
  echo "install_cutlass: nvidia-cutlass $version present in $dir"
  exit 0
fi
command -v python3 >/dev/null || { echo "install_cutlass: needs python3 (Debian: python3)" >&2; exit 1; }
python3 -m pip --version >/dev/null 2>&1 ||
  { echo "install_cutlass: needs pip for python3 (Debian: python3-pip)" >&2; exit 1; }
echo "install_cutlass: installing nvidia-cutlass==$version into $dir"
tmp="$dir.partial"
rm -rf "$tmp"
python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps \
  --target "$tmp" \
  "nvidia-cutlass==$version"
[ -f "$tmp/cutlass_library/source/include/cutlass/version.h" ] ||
  { echo "install_cutlass: the wheel has no cutlass_library/source/include" >&2; exit 1; }
rm -rf "$dir"
mv "$tmp" "$dir"
