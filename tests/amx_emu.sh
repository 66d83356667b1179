#!/usr/bin/env bash
# amx_emu.sh - the amx table's tile program (src/cpu/kernels_amx.c: blocking, padding, row and
# k tails, slices, operand layouts) on any x86-64 CPU: built against a scalar model of the
# AVX-512 and AMX intrinsics it uses (tests/amx_emu/immintrin.h), with the reference standing in
# for the avx512 table (tests/amx_emu/avx512_ref.c), and held to the reference by test_kernels.c,
# test_kernels_elem.c and test_amx.c (PTTS_AMX_EMU adds the table to their list). Twice:
# tdpbf16ps modelled in the reference's order (gemm_bf16_panel must then give the reference's bits, and test_amx.c's
# "ref" model every value) and in Intel's documented order, the hardware's (within kernels.h's
# bound, and test_amx.c's "split" model every value). The model
# is not the hardware; bench/amx_run.sh runs the real instructions. Exit 77 (skipped) off
# x86-64. Takes well under a minute.
# Usage: tests/amx_emu.sh [build-dir]   (default: a temporary directory)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
case "$(uname -m)" in
x86_64 | amd64) ;;
*)
  echo "amx_emu: not an x86-64 host: skipped"
  exit 77
  ;;
esac
cc=${CC:-cc}
out=${1:-}
if [ -z "$out" ]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
flags=(-std=c11 -O2 -D_DEFAULT_SOURCE -DPTTS_AMX_EMU -Wall -Wextra -Wpedantic -Werror -Wno-psabi
  -I"$root/include" -I"$root/src" -I"$root/tests" -DPTTS_FIXTURES="\"$root/tests/fixtures\"")
objs=() # everything but the amx table and the tests
for src in src/cpu/cpu.c src/cpu/kernels_ref.c src/cpu/amx_pack.c src/pool.c src/util.c \
  tests/amx_emu/avx512_ref.c; do
  o="$out/$(basename "$src" .c).o"
  "$cc" "${flags[@]}" -c "$root/$src" -o "$o"
  objs+=("$o")
done
for t in test_kernels test_kernels_elem; do
  "$cc" "${flags[@]}" -c "$root/tests/$t.c" -o "$out/$t.o"
done
"$cc" "${flags[@]}" -mavx2 -mfma -mf16c -c "$root/src/cpu/kernels_avx2.c" -o "$out/avx2.o"
objs+=("$out/avx2.o")
rc=0
for order in ref split; do
  def=()
  [ "$order" = split ] && def=(-DAMX_EMU_SPLIT)
  "$cc" "${flags[@]}" "${def[@]}" -I"$root/tests/amx_emu" -c "$root/src/cpu/kernels_amx.c" \
    -o "$out/amx_$order.o"
  "$cc" "${flags[@]}" "${def[@]}" -c "$root/tests/test_amx.c" -o "$out/test_amx_$order.o"
  for t in test_kernels test_kernels_elem test_amx; do
    o="$out/$t.o"
    [ "$t" = test_amx ] && o="$out/test_amx_$order.o"
    "$cc" "$o" "${objs[@]}" "$out/amx_$order.o" -o "$out/${t}_$order" -lm -lpthread
  done
  for t in test_kernels test_kernels_elem test_amx; do
    echo "== $t, tdpbf16ps modelled in the $order order"
    "$out/${t}_$order" | grep -E '^amx|tdpbf16ps|checks' || rc=1
  done
done
exit $rc
