#version 450
#extension GL_GOOGLE_include_directive : require
// gemm_sk.comp - 64 x 64 tiles, 8 x 8 an invocation, K split over 4 slices of the workgroup: grids too small for larger tiles (gemm_tile.glsl)
#define BM 64
#define BN 64
#define TM 8
#define TN 8
#define KS 4
#define BK 4
#include "gemm_tile.glsl"
