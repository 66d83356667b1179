#version 450
#extension GL_GOOGLE_include_directive : require
// gemm_l.comp - 128 rows x 128 outputs a workgroup, 8 x 8 an invocation: many rows, outputs > 64 (gemm_tile.glsl)
#define BM 128
#define BN 128
#define TM 8
#define TN 8
#define BK 8
#include "gemm_tile.glsl"
