#version 450
#extension GL_GOOGLE_include_directive : require
// gemm_tch_q.comp - 128 rows x 32 outputs a workgroup, 4 x 1 subgroups, K steps of 32 (gemm_tch.glsl: tensor cores, float16 weights); for the codec's 32-output convs
#define BM 128
#define BN 32
#define WR 4
#define WC 1
#define BK 32
#include "gemm_tch.glsl"
