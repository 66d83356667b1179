// linear_pc.glsl - the push constants of every linear kernel (linear.comp, gemm.comp,
// mgemm.comp, skinny.comp, and gemm_tile.glsl / gemm_tc.glsl through gemm_out.glsl; pc_lin in
// engine_vulkan.c), the row addressing, and the X load transform.
layout(push_constant) uniform P {
    uint N, K, M;
    uint xoff, xrps, xgs, xld;
    uint yoff, yrps, ygs, yld;
    uint goff, grps, ggs, gld, gbuf; // goff NONE: no gate; gbuf 0 arena, 1 weights
    uint woff, boff;
    uint act, accum;
    float alpha;
    uint v4;
} p;
// X values as the kernel uses them: as stored, or (XACT 3, the pipeline variant pvk_dispatch
// makes for PVK_XELU) the ELU of each: the codec's convs read their inputs raw, ELU(0) = 0
// keeps zero padding zero. A specialization constant, not a push constant: with a run-time
// branch the unused ELU code alone made the H200's step gemms slower (bench/RESULTS.md).
layout(constant_id = 0) const uint XACT = 0u;
vec4 xload4(vec4 v) { return XACT == 3u ? vec4(elu_(v.x), elu_(v.y), elu_(v.z), elu_(v.w)) : v; }
float xload(float v) { return XACT == 3u ? elu_(v) : v; }
uint addr(uint off, uint rps, uint gs, uint ld, uint r) { return off + (r / rps) * gs + (r % rps) * ld; }
