#!/usr/bin/env bash
# Installs the Debian packages gemmprof builds and tests with, skipping those already
# present. Debian 12 (bookworm) or newer; needs root or sudo for apt-get.
# usage: deploy/install_deps.sh [EXTRA_PACKAGE...]   (deploy/fuzz.sh adds clang's)
set -euo pipefail
packages=("$@"
  build-essential cmake pkg-config file
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libspdlog-dev libsqlite3-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev zlib1g-dev librsvg2-bin libssl-dev libtomlplusplus-dev
  patchelf python3 python3-yaml openssl lld
  libpq-dev postgresql-15
  libcpp-httplib-dev chromium
)
# CUDA builds also take CUTLASS (header-only, pinned) from its PyPI wheel. No kernel
# needs it yet, so a machine that cannot reach PyPI still builds (with a warning).
install_cutlass_or_warn() {
  "$(dirname "$0")/install_cutlass.sh" ||
    echo "install_deps: warning: CUTLASS not installed (see above); the CUDA build goes on without it" >&2
}
if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
  packages+=(python3-pip)
  want_cutlass=1
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#packages[@]} packages present"
  [ -z "${want_cutlass:-}" ] || install_cutlass_or_warn
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install_deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install_deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
[ -z "${want_cutlass:-}" ] || install_cutlass_or_warn
