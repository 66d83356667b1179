#version 450
#extension GL_GOOGLE_include_directive : require
// gemm_tch_x.comp - 128 rows x 256 outputs a workgroup (every output of a 256-output conv), 2 x 4 subgroups of 4 x 4 fragments, K steps of 32 (gemm_tch.glsl: tensor cores, float16 weights)
#define BM 128
#define BN 256
#define WR 2
#define WC 4
#define BK 32
#include "gemm_tch.glsl"
