# GPU runs on the lent H200 (see bench/RESULTS.md): tests and bench_vulkan from a local build
# carried as build-vk2 (with build-vk2/libs: the shared libraries the binaries need) and .gl
# (the Vulkan loader and GL dispatch packages, installed here first).
dpkg -i .gl/*.deb >/dev/null 2>&1
export LD_LIBRARY_PATH=$PWD/build-vk2/libs PTTS_FIXTURES=$PWD/tests/fixtures
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
B=build-vk2/bench_vulkan
case "$1" in
tests)
  for G in ${GS:-default}; do
    echo "== tests PTTS_VK_STEPK=$G"
    if [ "$G" = default ]; then unset PTTS_VK_STEPK; else export PTTS_VK_STEPK=$G; fi
    timeout 100 build-vk2/tests/test_vulkan 2>&1 | grep -E "err|checks"
    timeout 100 build-vk2/tests/test_vulkan_full 2>&1 | tail -2
  done; unset PTTS_VK_STEPK ;;
stepk)
  for G in ${GS:-0 132}; do echo "== PTTS_VK_STEPK=$G"; PTTS_VK_STEPK=$G timeout 60 $B --streams 1 --frames 64 2>&1 | grep -E '^ +[0-9]|checksum'; done
  for E in 1 2 3; do echo "== skip $E (1 matvec, 2 attn, 3 both)"; PTTS_VK_STEPK_EMPTY=$E PTTS_VK_STEPK=132 timeout 60 $B --streams 1 --frames 64 2>&1 | grep -E '^ +[0-9]'; done ;;
bf16)
  timeout 60 $B --streams 1,2 --frames 64 --precision bf16 2>&1 | grep -E '^ +[0-9]|checksum|device'
  PTTS_VK_STEPK_F32=1 timeout 60 $B --streams 1 --frames 64 --precision bf16 2>&1 | grep -E '^ +[0-9]'
  timeout 60 $B --streams 1,2 --frames 64 2>&1 | grep -E '^ +[0-9]' ;;
modes)
  nproc
  for BK in cpu vulkan vulkan-codec; do
    timeout 150 build-vk2/bench_pipeline --backend $BK --precision ${PREC:-f32} --threads ${THR:-16} --only loop,ttfa,batch --streams 1,8 --frames 40 --reps 3 2>&1 | grep -v "^$" | tail -8
  done ;;
all)
  timeout 100 $B --streams 1,8,32,128 --frames 64 2>&1 | tail -12
  PTTS_VK_NO_GROUP_ATTN=1 timeout 100 $B --streams 128 --frames 32 2>&1 | grep -E "^ +[0-9]"
  timeout 60 $B --streams 1 --frames 32 --k 1 2>&1 | grep -E '^ +[0-9]' ;;
ab)
  # A/B of stepk knobs at one stream, interleaved: KNOBS="NONE PTTS_VK_STEPK_F32=1 ..."
  # (OLD: build-vk2/bench_vulkan_old, a binary of an earlier commit copied there by hand)
  for R in 1 2; do for K in ${KNOBS:-NONE}; do
    echo "== $K (round $R)"
    if [ "$K" = NONE ]; then E="X=1"; else E="$K"; fi
    BB=$B; if [ "$K" = OLD ]; then BB=${B}_old; E="X=1"; fi
    env $E timeout 60 $BB --streams 1 --frames ${FRAMES:-64} ${PRECARG:-} 2>&1 | grep -E '^ +[0-9]'
  done; done ;;
gemm)
  # the tiled gemm kernels (gemm_tile.glsl, PTTS_VK_GEMM_NEW=1|big) against gemm.comp / mgemm
  PTTS_VK_PIPE_STATS=1 timeout 60 $B --streams 1 --frames 4 2>&1 | grep -E "pipeline (gemm|mgemm)"
  for E in X=1 PTTS_VK_GEMM_NEW=1 PTTS_VK_GEMM_NEW=big "PTTS_VK_GEMM_NEW=1 PTTS_VK_GEMM_MINWG=132"; do echo "== $E"
    env $E PTTS_VK_PROFILE=1 timeout 100 $B --streams 128 --frames 32 2>&1 | grep -E "^  (gemm|mgemm)|^ +[0-9]"; done
  for E in X=1 PTTS_VK_GEMM_NEW=1 PTTS_VK_GEMM_NEW=big; do echo "== $E"; env $E timeout 100 $B --streams 1,8,32 --frames 64 2>&1 | grep -E "^ +[0-9]"; done ;;
loop)
  # one stream through the generation loop, f32 and bf16, 256 vs 512 invocations a stepk workgroup
  for W in 512 256; do for P in f32 bf16; do echo "== $P PTTS_VK_STEPK_WGS=$W"
    PTTS_VK_STEPK_WGS=$W timeout 100 build-vk2/bench_pipeline --backend vulkan --precision $P --threads 16 --only loop,ttfa --frames 40 --reps 5 2>&1 | grep -E "^loop|^ttfa"
  done; done ;;
esac
