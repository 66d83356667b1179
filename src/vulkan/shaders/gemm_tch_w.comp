#version 450
#extension GL_GOOGLE_include_directive : require
// gemm_tch_w.comp - 64 rows x 128 outputs a workgroup, 2 x 4 subgroups, K steps of 32 (gemm_tch.glsl: tensor cores, float16 weights)
#define BM 64
#define BN 128
#define WR 2
#define WC 4
#define BK 32
#include "gemm_tch.glsl"
