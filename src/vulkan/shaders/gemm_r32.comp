#version 450
#extension GL_GOOGLE_include_directive : require
// gemm_r32.comp - 256 rows x 32 outputs a workgroup, 8 x 4 an invocation: many rows, up to 32 outputs (gemm_tile.glsl)
#define BM 256
#define BN 32
#define TM 8
#define TN 4
#define BK 8
#include "gemm_tile.glsl"
