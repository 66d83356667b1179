#version 450
#extension GL_GOOGLE_include_directive : require
// gemm_tc_s.comp - 32 rows x 32 outputs a workgroup, 2 x 2 subgroups, K steps of 128 (gemm_tc.glsl: tensor cores, half-precision mode)
#define BM 32
#define BN 32
#define WR 2
#define WC 2
#define BK 128
#include "gemm_tc.glsl"
