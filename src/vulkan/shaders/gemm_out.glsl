// gemm_out.glsl - what the vec4 GEMM kernels (gemm_tile.glsl, gemm_tc.glsl) share, included
// after they declare ar4: the linear kernels' push constants (linear_pc.glsl) and the epilogue
// (bias, activation, alpha, gate, then store or accumulate four outputs of one row, in parts).
#include "linear_pc.glsl"
float gate(uint i) { return p.gbuf == 1u ? wt[i] : ar[i]; }
// The epilogue in three parts, so that a caller with several vec4s of outputs can issue every
// load before its first store (a store to the arena keeps the compiler from moving later arena
// loads above it, which would make each vec4 wait out its own load latency):
// bias of outputs m .. m + 3 (zeros past M or without bias)
vec4 bias4(uint m) {
    if (p.boff == NONE || m >= p.M) return vec4(0.0);
    const bool full = m + 3u < p.M;
    return vec4(wt[p.boff + m], full || m + 1u < p.M ? wt[p.boff + m + 1u] : 0.0,
                full || m + 2u < p.M ? wt[p.boff + m + 2u] : 0.0, full ? wt[p.boff + m + 3u] : 0.0);
}
// activation, alpha and gate of sums sv (bias included) of outputs m .. m + 3 (m < M) of a row
// whose gate row is at ga
vec4 val4(uint ga, uint m, vec4 sv) {
    vec4 v = vec4(act_(p.act, sv.x), act_(p.act, sv.y), act_(p.act, sv.z), act_(p.act, sv.w)) * p.alpha;
    if (p.goff != NONE) {
        const bool full = m + 3u < p.M;
        v *= vec4(gate(ga + m), full || m + 1u < p.M ? gate(ga + m + 1u) : 0.0,
                  full || m + 2u < p.M ? gate(ga + m + 2u) : 0.0, full ? gate(ga + m + 3u) : 0.0);
    }
    return v;
}
// what accumulation adds to outputs m .. m + 3 (m < M) of the row at ya: Y, or zeros
vec4 old4(uint ya, uint m, bool yv4) {
    if (p.accum == 0u) return vec4(0.0);
    const bool full = m + 3u < p.M;
    if (yv4 && full) return ar4[(ya + m) / 4u];
    const uint y = ya + m;
    return vec4(ar[y], full || m + 1u < p.M ? ar[y + 1u] : 0.0, full || m + 2u < p.M ? ar[y + 2u] : 0.0,
                full ? ar[y + 3u] : 0.0);
}
// store outputs m .. m + 3 (m < M; a vec4 store where Y's offsets allow)
void put4y(uint ya, uint m, vec4 v, bool yv4) {
    const bool full = m + 3u < p.M;
    if (yv4 && full) {
        ar4[(ya + m) / 4u] = v;
    } else {
        const uint y = ya + m;
        ar[y] = v.x;
        if (full || m + 1u < p.M) ar[y + 1u] = v.y;
        if (full || m + 2u < p.M) ar[y + 2u] = v.z;
        if (full) ar[y + 3u] = v.w;
    }
}
