#!/usr/bin/env bash
# The client bundle that client_only_build_test.sh made runs on its own: with an empty
# environment (no LD_LIBRARY_PATH), from its folder and unpacked from its tarball
# elsewhere, and every library it needs beyond glibc, libstdc++ and libgcc_s resolves
# inside its lib/.
# usage: client_bundle_test.sh BUNDLE_DIR
set -euo pipefail
bundle=$(realpath "${1:?usage: client_bundle_test.sh BUNDLE_DIR}")
fail() { echo "FAIL: $*" >&2; exit 1; }
# What the target machine provides; everything else must travel in lib/.
system_lib='^(linux-vdso|libc|libm|libmvec|libdl|librt|libpthread|libresolv|libutil|libanl|libnsl|ld-linux.*|libstdc\+\+|libgcc_s)\.so'

check_runs() {
  local bin=$1 help
  help=$(env -i "$bin" --help) || fail "env -i $bin --help exited $?"
  # A here-string, not a pipe: with pipefail, grep -q leaving early could fail the
  # pipeline through echo's SIGPIPE although the text matched.
  grep -q 'Usage' <<< "$help" || fail "$bin --help printed no usage: $help"
}

check_resolves() {
  local f=$1 lib path
  readelf -d "$f" | grep -qE "R(UN)?PATH.*\[$2\]" || fail "$f: RPATH is not $2"
  while read -r lib path; do
    [[ $lib =~ $system_lib ]] && continue
    [ "$path" = "not found" ] && fail "$f: $lib not found"
    [ "$(dirname "$(realpath "$path")")" = "$bundle/lib" ] ||
      fail "$f: $lib resolves to $path, outside $bundle/lib"
  done < <(env -i ldd "$f" | awk '$2 == "=>" {print $1, ($3 == "not" ? "not found" : $3)}')
}

check_runs "$bundle/bin/gemmprof"
check_resolves "$bundle/bin/gemmprof" '\$ORIGIN/../lib'
for f in "$bundle"/lib/*; do check_resolves "$f" '\$ORIGIN'; done
echo "bin/gemmprof and $(ls "$bundle/lib" | wc -l) libraries resolve inside $bundle/lib"

tarball=$(ls "$bundle"/gemmprof-client-linux-*.tar.gz) || fail "no tarball in $bundle"
elsewhere=$(mktemp -d)
trap 'rm -rf "$elsewhere"' EXIT
tar -C "$elsewhere" -xzf "$tarball"
check_runs "$elsewhere/gemmprof-client/bin/gemmprof"
echo "$(basename "$tarball") unpacks to gemmprof-client/ and runs from $elsewhere"
echo "client bundle: ok"
