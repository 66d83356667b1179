#version 450
#extension GL_GOOGLE_include_directive : require
// gemm_s32.comp - 32 rows x 64 outputs a workgroup, 4 x 4 an invocation, K split over 2 slices
// of the workgroup: hundreds to ~15000 rows of more than 32 outputs whose grid of larger tiles
// would not fill the GPU (gemm_tile.glsl)
#define BM 32
#define BN 64
#define TM 4
#define TN 4
#define KS 2
#define BK 8
#include "gemm_tile.glsl"
