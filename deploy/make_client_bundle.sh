#!/usr/bin/env bash
# Builds the gemmprof CLI alone (GEMMPROF_CLIENT_ONLY: proto/, core/, wire/, client/;
# spdlog, SQLite and CUDA are not even looked for) and packs a relocatable bundle that
# runs where none of gemmprof's dependencies are installed:
#   OUT/bin/gemmprof   RPATH $ORIGIN/../lib
#   OUT/lib/           gRPC, protobuf, abseil, OpenSSL, c-ares, re2, zlib... (RPATH $ORIGIN)
#   OUT/gemmprof-client-linux-<arch>.tar.gz   the same as one file, unpacking to
#                      gemmprof-client/{bin,lib}
# Left out, taken from the machine it runs on: glibc (libc, libm, libpthread, libdl,
# librt, the dynamic loader...), libstdc++ and libgcc_s. The last line printed says
# which glibc and libstdc++ versions that machine needs.
# Usage: deploy/make_client_bundle.sh [OUT]      (default: client-bundle/)
# Build folder: $GEMMPROF_CLIENT_BUILD (default: build-client/); its configure output is
# kept in gemmprof-configure.log there; its build type: $GEMMPROF_CLIENT_BUILD_TYPE
# (default Release). ccache is used when installed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$root/client-bundle}")
build=$(realpath -m "${GEMMPROF_CLIENT_BUILD:-$root/build-client}")
for tool in patchelf ldd strip objdump; do
  command -v $tool >/dev/null || { echo "make_client_bundle: needs $tool" >&2; exit 1; }
done
# OUT is emptied first: refuse anything that is not an earlier bundle.
if [ -d "$out" ] && [ -n "$(ls -A "$out")" ] && [ ! -e "$out/bin/gemmprof" ]; then
  echo "make_client_bundle: $out exists and is not a client bundle; not overwriting it" >&2
  exit 1
fi

# Paths under the base folder hash alike in every checkout, so a fresh build folder
# reuses the cache. COMMON setups export it; the checkout is the fallback.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
launcher=()
if [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] && command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
mkdir -p "$build"
# The server's dependencies made unfindable: the client must build without them.
if ! cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE="${GEMMPROF_CLIENT_BUILD_TYPE:-Release}" \
     -DGEMMPROF_CLIENT_ONLY=ON \
     -DGEMMPROF_ENABLE_CUDA=OFF -DCMAKE_DISABLE_FIND_PACKAGE_SQLite3=ON \
     -DCMAKE_DISABLE_FIND_PACKAGE_spdlog=ON -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON \
     "${launcher[@]}" >"$build/gemmprof-configure.log" 2>&1; then
  cat "$build/gemmprof-configure.log" >&2
  exit 1
fi
cmake --build "$build" -j"$(nproc)" --target gemmprof

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
cp "$build/bin/gemmprof" "$out/bin/"
system_lib='^(libc|libm|libmvec|libdl|librt|libpthread|libresolv|libutil|libanl|libnsl|ld-linux.*|libstdc\+\+|libgcc_s)\.so'
ldd "$out/bin/gemmprof" | awk '/=> \//{print $3}' | sort -u | while read -r lib; do
  name=$(basename "$lib")
  if ! [[ $name =~ $system_lib ]]; then cp -L "$lib" "$out/lib/$name"; fi
done
strip --strip-unneeded "$out"/bin/* "$out"/lib/*
patchelf --set-rpath '$ORIGIN/../lib' "$out/bin/gemmprof"
# Each library finds its own dependencies beside it (a RUNPATH serves only the object
# that carries it, not the libraries that object loads).
for f in "$out"/lib/*; do patchelf --set-rpath '$ORIGIN' "$f"; done

tarball="gemmprof-client-linux-$(uname -m).tar.gz"
tar -C "$out" --transform 's,^,gemmprof-client/,' -czf "$out/$tarball" bin lib
newest() { objdump -T "$out"/bin/* "$out"/lib/* | grep -o "$1_[0-9.]*" | sort -uV | tail -1; }
echo "client bundle: $(du -sh --exclude="$tarball" "$out" | cut -f1) in $out" \
  "($tarball $(du -h "$out/$tarball" | cut -f1)); needs $(newest GLIBC) and $(newest GLIBCXX)"
