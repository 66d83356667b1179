#version 450
#extension GL_GOOGLE_include_directive : require
// gemm_tch_t.comp - 128 rows x 64 outputs a workgroup, 4 x 2 subgroups, K steps of 32 (gemm_tch.glsl: tensor cores, float16 weights)
#define BM 128
#define BN 64
#define WR 4
#define WC 2
#define BK 32
#include "gemm_tch.glsl"
