#!/usr/bin/env bash
# neon_kernels.sh - builds tests/test_kernels.c and test_kernels_elem.c with the kernel sources
# for AArch64 (ref and NEON tables, the thread pool) and runs them under qemu-user: the NEON
# table held against the reference on an x86 host. Exit 77 (skipped) when the cross compiler or
# qemu is absent (Debian: gcc-aarch64-linux-gnu qemu-user libc6-dev-arm64-cross). Takes under a
# minute.
# Usage: tests/neon_kernels.sh [build-dir]   (default: a temporary directory)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cc=aarch64-linux-gnu-gcc
qemu=qemu-aarch64
sysroot=/usr/aarch64-linux-gnu
for tool in "$cc" "$qemu"; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "neon_kernels: $tool not found: skipped"
    exit 77
  fi
done
if [ ! -d "$sysroot" ]; then
  echo "neon_kernels: $sysroot not found: skipped"
  exit 77
fi
out=${1:-}
if [ -z "$out" ]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
rc=0
for t in test_kernels test_kernels_elem; do
  "$cc" -std=c11 -O2 -D_DEFAULT_SOURCE -Wall -Wextra -Wpedantic -Werror \
    -I"$root/include" -I"$root/src" -I"$root/tests" -DPTTS_FIXTURES="\"$root/tests/fixtures\"" \
    "$root/tests/$t.c" "$root/src/cpu/cpu.c" "$root/src/cpu/kernels_ref.c" \
    "$root/src/cpu/kernels_neon.c" "$root/src/pool.c" "$root/src/util.c" \
    -o "$out/${t}_neon" -lm -lpthread
  "$qemu" -L "$sysroot" "$out/${t}_neon" || rc=1
done
exit $rc
