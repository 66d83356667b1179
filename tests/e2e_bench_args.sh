#!/usr/bin/env bash
# e2e_bench_args.sh - the benchmark programs refuse what they cannot use: an unknown option, a
# value out of range or an argument too many exits 2 with a message naming the program, before
# any figure (a misspelt run must not print figures of defaults it did not ask for); --help
# prints the usage and exits 0. Run by ctest as
#   bash e2e_bench_args.sh <pocket-tts binary> <fixtures dir>   (the benches sit beside it)
set -u
dir=$(dirname "$1")
fail=0
ran=0

expect() { # rc program args...: the exit code, and for 2 a message that names the program
    local want=$1 prog=$2
    shift 2
    [ -x "$dir/$prog" ] || return 0
    ran=$((ran + 1))
    local out rc
    out=$(timeout 20 "$dir/$prog" "$@" 2>&1)
    rc=$?
    if [ "$rc" != "$want" ]; then
        echo "FAIL $prog $*: exit $rc, expected $want: $(echo "$out" | head -2)" >&2
        fail=1
    elif [ "$want" = 2 ] && ! echo "$out" | grep -q "^$prog: "; then
        echo "FAIL $prog $*: no message naming $prog: $(echo "$out" | head -2)" >&2
        fail=1
    elif [ "$want" = 0 ] && ! echo "$out" | grep -q "usage: $prog"; then
        echo "FAIL $prog $*: no usage: $(echo "$out" | head -2)" >&2
        fail=1
    else
        echo "ok   $prog $*"
    fi
}

for b in bench_codec bench_kernels bench_voice bench_precision bench_tokenizer bench_vulkan \
    bench_pipeline; do
    expect 0 $b --help
done
expect 2 bench_codec --frames 10
expect 2 bench_codec 0
expect 2 bench_codec 10 2 f16
expect 2 bench_codec 10 2 int8 1 extra
expect 2 bench_kernels x
expect 2 bench_kernels 65
expect 2 bench_voice 0.01
expect 2 bench_voice 10 3 2 extra
expect 2 bench_precision -3
expect 2 bench_tokenizer a b
expect 2 bench_vulkan --bogus 1
expect 2 bench_vulkan --stream 256
expect 2 bench_vulkan --streams 1,x
expect 2 bench_vulkan --precision f16
expect 2 bench_vulkan --frames
expect 2 bench_vulkan --frames=0
expect 2 bench_vulkan --k 99
expect 2 bench_pipeline --bogus

echo "$ran cases"
[ "$ran" -gt 0 ] || { echo "FAIL no bench program beside $1" >&2; exit 1; }
exit $fail
