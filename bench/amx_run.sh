#!/usr/bin/env bash
# amx_run.sh - the AMX table's checks and its speed beside avx512, in one command, for an
# AMX machine (Sapphire Rapids or later; on others the AMX parts say "skipped"/"not listed").
# Builds the five targets in build-amx/, then runs: test_kernels and test_kernels_elem (every
# table against the reference; amx's gemm_bf16_panel within kernels.h's bound), test_amx (packing, detection,
# tdpbf16ps's order against five models, gemm_q8q bits on large K), bench_kernels (avx512 and
# amx rows side by side), bench_codec in bf16 and int8 modes under PTTS_ISA=avx512 and amx.
# Usage: bench/amx_run.sh [frames (default 100)] [threads (default 2)]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
frames=${1:-100}
threads=${2:-2}
b="$root/build-amx"
cmake -S "$root" -B "$b" -DCMAKE_BUILD_TYPE=Release -DPTTS_WERROR=ON >/dev/null || exit 1
cmake --build "$b" -j"$(nproc)" --target test_kernels test_kernels_elem test_amx bench_kernels \
  bench_codec >/dev/null || exit 1
grep -m1 "model name" /proc/cpuinfo
rc=0
echo "== test_kernels"; "$b/tests/test_kernels" || rc=1
echo "== test_kernels_elem"; "$b/tests/test_kernels_elem" || rc=1
echo "== test_amx"; "$b/tests/test_amx" || rc=1
echo "== bench_kernels"; "$b/bench_kernels" 5
for mode in bf16 int8; do
  for isa in avx512 amx; do
    echo "== bench_codec $mode PTTS_ISA=$isa"
    PTTS_ISA=$isa "$b/bench_codec" "$frames" "$threads" "$mode"
  done
done
exit $rc
