#version 450
#extension GL_GOOGLE_include_directive : require
// gemm_r64.comp - 256 rows x 64 outputs a workgroup, 8 x 8 an invocation: many rows, 33..64 outputs (gemm_tile.glsl)
#define BM 256
#define BN 64
#define TM 8
#define TN 8
#define BK 8
#include "gemm_tile.glsl"
