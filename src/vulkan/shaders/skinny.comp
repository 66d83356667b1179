#version 450
#extension GL_GOOGLE_include_directive : require
// skinny.comp - the contract of linear.comp for many rows and at most 8 outputs (the codec's
// last convolutions): one invocation per row, all outputs in registers; every invocation reads
// the same W element at a time (a broadcast), X rows as vec4s when p.v4.
#include "common.glsl"
layout(std430, set = 0, binding = 0) readonly buffer Weights4 { vec4 wt4[]; };
layout(std430, set = 0, binding = 1) readonly buffer Arena4 { vec4 ar4[]; };
layout(local_size_x = 256) in;
#include "linear_pc.glsl"
#define MB 8
void main() {
    uint r = flat_id();
    if (r >= p.N) return;
    uint xa = addr(p.xoff, p.xrps, p.xgs, p.xld, r);
    float acc[MB];
    for (uint m = 0u; m < MB; m++) acc[m] = 0.0;
    if (p.v4 != 0u) {
        uint K4 = p.K / 4u, x4 = xa / 4u, w4 = p.woff / 4u;
        for (uint k = 0u; k < K4; k++) {
            vec4 x = xload4(ar4[x4 + k]);
            for (uint m = 0u; m < MB; m++)
                if (m < p.M) acc[m] += dot(x, wt4[w4 + m * K4 + k]);
        }
    } else {
        for (uint k = 0u; k < p.K; k++) {
            float x = xload(ar[xa + k]);
            for (uint m = 0u; m < MB; m++)
                if (m < p.M) acc[m] += x * wt[p.woff + m * p.K + k];
        }
    }
    uint ya = addr(p.yoff, p.yrps, p.ygs, p.yld, r);
    uint ga = p.goff != NONE ? addr(p.goff, p.grps, p.ggs, p.gld, r) : 0u;
    for (uint m = 0u; m < MB; m++) {
        if (m >= p.M) break;
        float s = acc[m];
        if (p.boff != NONE) s += wt[p.boff + m];
        float v = act_(p.act, s) * p.alpha;
        if (p.goff != NONE) v *= p.gbuf == 1u ? wt[ga + m] : ar[ga + m];
        ar[ya + m] = p.accum != 0u ? ar[ya + m] + v : v;
    }
}
