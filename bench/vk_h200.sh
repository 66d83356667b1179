# GPU runs on the lent H200 (see bench/RESULTS.md): tests and bench_vulkan from a local build
# carried as build-vk2 (with build-vk2/libs: the shared libraries the binaries need) and .gl
# (the Vulkan loader and GL dispatch packages, installed here first). The engine's paths are
# chosen with bench_vulkan's flags (--stepk N, --tc 1|-1, --spin US, --apart 1, --tile T), the test hooks
# and model options, not with environment variables.
dpkg -i .gl/*.deb >/dev/null 2>&1
export LD_LIBRARY_PATH=$PWD/build-vk2/libs PTTS_FIXTURES=$PWD/tests/fixtures
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
B=build-vk2/bench_vulkan
case "$1" in
tests)
  timeout 300 build-vk2/tests/test_vulkan 2>&1 | grep -E "err|checks|skipped"
  timeout 300 build-vk2/tests/test_vulkan_hooks 2>&1 | grep -E "err|checks|skipped"
  timeout 300 build-vk2/tests/test_vulkan_full 2>&1 | tail -2 ;;
stepk)
  for G in ${GS:--1 0 132}; do echo "== --stepk $G"; timeout 60 $B --streams 1 --frames 64 --stepk $G 2>&1 | grep -E '^ +[0-9]|checksum'; done ;;
bf16)
  timeout 60 $B --streams 1,2 --frames 64 --precision bf16 2>&1 | grep -E '^ +[0-9]|checksum|device'
  timeout 60 $B --streams 1,2 --frames 64 2>&1 | grep -E '^ +[0-9]' ;;
modes)
  nproc
  for BK in cpu vulkan vulkan-codec; do
    timeout 150 build-vk2/bench_pipeline --backend $BK --precision ${PREC:-f32} --threads ${THR:-16} --only loop,ttfa,batch --streams 1,8 --frames 40 --reps 3 2>&1 | grep -v "^$" | tail -8
  done ;;
all)
  timeout 100 $B --streams 1,8,32,128 --frames 64 2>&1 | tail -12
  timeout 60 $B --streams 1 --frames 32 --k 1 2>&1 | grep -E '^ +[0-9]' ;;
ab)
  # A/B of bench_vulkan flag sets, interleaved: ARGS="NONE --tc_-1 --spin_-1" (sets apart by
  # spaces, underscores for spaces inside one set) at STREAMS (default 1), e.g. the one-row
  # attention: ARGS="NONE --attndec_1" STREAMS=256,1024 FRAMES=160 PRECARG="--precision bf16"
  for R in 1 2; do for A in ${ARGS:-NONE}; do
    echo "== $A (round $R)"
    F=$(echo "$A" | sed 's/^NONE$//; s/_/ /g')
    timeout 200 $B --streams ${STREAMS:-1} --frames ${FRAMES:-64} ${PRECARG:-} $F 2>&1 | grep -E '^ +[0-9]'
  done; done ;;
profile)
  PTTS_VK_PIPE_STATS=1 timeout 60 $B --streams 1 --frames 4 2>&1 | grep -E "pipeline (gemm|mgemm)"
  PTTS_VK_PROFILE=1 timeout 100 $B --streams 128 --frames 32 2>&1 | grep -E "^  |^ +[0-9]" ;;
round)
  # one call after a restructuring: the host CPU, the kernel and 3.3 parity tests there (AVX-512),
  # the GPU tests, the engine's figures (bench_vulkan, both precisions) and the loop's
  grep -m1 "model name" /proc/cpuinfo; nproc
  grep -o -w -E "avx512f|avx512bw|avx512_bf16|avx512_vnni|amx_tile|amx_bf16|amx_int8" /proc/cpuinfo | sort -u | tr "\n" " "; echo
  timeout 60 build-vk2/tests/test_kernels 2>&1 | grep -E "checks"
  timeout 60 build-vk2/tests/test_kernels_elem 2>&1 | grep -E "gelu on|checks"
  timeout 60 build-vk2/tests/test_ffn_gelu 2>&1 | tail -1
  timeout 120 build-vk2/tests/test_generate 2>&1 | tail -1
  timeout 300 build-vk2/tests/test_vulkan 2>&1 | grep -E "err|checks|skipped|FAIL" | tail -40
  timeout 300 build-vk2/tests/test_vulkan_hooks 2>&1 | grep -E "err|checks|skipped|FAIL" | tail -40
  timeout 200 build-vk2/tests/test_vulkan_full 2>&1 | tail -3
  for P in f32 bf16; do echo "== bench_vulkan $P"
    timeout 120 $B --streams 1,8,32,128,256 --frames 64 --precision $P 2>&1 | grep -E "^ +[0-9]|stream|paired" | tail -8
  done
  for P in f32 bf16; do echo "== loop $P"
    timeout 100 build-vk2/bench_pipeline --backend vulkan --precision $P --threads 16 --only loop,ttfa --frames 40 --reps 5 --tokenizer tests/fixtures/tokenizer/sp_unigram.model 2>&1 | grep -E "^loop|^ttfa"
  done
  timeout 100 build-vk2/bench_kernels 3 2>&1 | grep -E "gelu|^f32 .* 1  +1 " ;;
cpu)
  # the host's CPU, every precision, 2 and 16 threads: the tree before this round
  # (build-vk2/pocket-tts-old, `pocket-tts bench` of 17ed481) against bench_pipeline, interleaved
  T=tests/fixtures/tokenizer/sp_unigram.model
  for R in 1 2; do for TH in 2 16; do for P in f32 bf16 int8; do
    o=$(timeout 60 build-vk2/pocket-tts-old bench --backend cpu --precision $P --threads $TH --only backbone,flow,codec,loop --frames 40 --reps 3 --tokenizer $T 2>&1 | grep -E "^(backbone|flow|codec|loop) " | awk '{printf "%s %s  ", $1, $2}')
    n=$(timeout 60 build-vk2/bench_pipeline --backend cpu --precision $P --threads $TH --only backbone,flow,codec,loop --frames 40 --reps 3 --tokenizer $T 2>&1 | grep -E "^(backbone|flow|codec|loop) " | awk '{printf "%s %s  ", $1, $2}')
    echo "r$R t$TH $P  old: $o"; echo "r$R t$TH $P  new: $n"
  done; done; done ;;
loop)
  # one stream through the generation loop, f32 and bf16
  for P in f32 bf16; do echo "== $P"
    timeout 100 build-vk2/bench_pipeline --backend vulkan --precision $P --threads 16 --only loop,ttfa --frames 40 --reps 5 --tokenizer tests/fixtures/tokenizer/sp_unigram.model 2>&1 | grep -E "^loop|^ttfa"
  done ;;
esac
