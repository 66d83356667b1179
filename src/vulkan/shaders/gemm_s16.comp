#version 450
#extension GL_GOOGLE_include_directive : require
// gemm_s16.comp - 16 rows x 32 outputs a workgroup, 4 x 4 an invocation, K split over 8 slices
// of the workgroup: few rows (a 1-stream codec pass: 128 rows), where larger tiles leave most
// of the GPU idle and mgemm.comp is latency-bound (gemm_tile.glsl)
#define BM 16
#define BN 32
#define TM 4
#define TN 4
#define KS 8
#define BK 8
#include "gemm_tile.glsl"
