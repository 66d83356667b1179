#version 450
#extension GL_GOOGLE_include_directive : require
// mgemm.comp - the contract of linear.comp for 16..a few hundred rows with vec4 operands (p.v4):
// a workgroup computes 32 outputs x 8 rows; 8 groups of 32 lanes, each group 4 outputs, lanes
// split K. Every W vec4 loaded is used for 8 rows and every X vec4 for 4 outputs (registers).
// Row blocks run along gl_WorkGroupID.x so the blocks that read the same W rows run together
// and W comes from DRAM about once (L2 serves the rest).
#include "common.glsl"
layout(std430, set = 0, binding = 0) readonly buffer Weights4 { vec4 wt4[]; };
layout(std430, set = 0, binding = 1) readonly buffer Arena4 { vec4 ar4[]; };
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
    uint N, K, M;
    uint xoff, xrps, xgs, xld;
    uint yoff, yrps, ygs, yld;
    uint goff, grps, ggs, gld, gbuf;
    uint woff, boff;
    uint act, accum;
    float alpha;
    uint v4;
} p;
#define RB 8
#define OB 4
shared float red[RB * 256];
uint addr(uint off, uint rps, uint gs, uint ld, uint r) { return off + (r / rps) * gs + (r % rps) * ld; }
void main() {
    uint tid = gl_LocalInvocationID.x, lane = tid & 31u, grp = tid >> 5;
    uint r0 = gl_WorkGroupID.x * RB, mb = gl_WorkGroupID.y * 32u + grp * OB;
    uint nr = min(uint(RB), p.N - r0);
    uint K4 = p.K / 4u;
    float acc[RB][OB];
    uint xb[RB], wb[OB];
    for (uint j = 0u; j < RB; j++) {
        for (uint o = 0u; o < OB; o++) acc[j][o] = 0.0;
        xb[j] = (j < nr ? addr(p.xoff, p.xrps, p.xgs, p.xld, r0 + j) : p.xoff) / 4u;
    }
    for (uint o = 0u; o < OB; o++) wb[o] = (p.woff + min(mb + o, p.M - 1u) * p.K) / 4u;
    for (uint k = lane; k < K4; k += 32u) {
        vec4 w[OB];
        for (uint o = 0u; o < OB; o++) w[o] = wt4[wb[o] + k];
        for (uint j = 0u; j < RB; j++) {
            if (j < nr) {
                vec4 x = ar4[xb[j] + k];
                for (uint o = 0u; o < OB; o++) acc[j][o] += dot(w[o], x);
            }
        }
    }
    for (uint o = 0u; o < OB; o++) {
        for (uint j = 0u; j < RB; j++) red[j * 256u + tid] = acc[j][o];
        barrier();
        if (tid < 8u * RB) {
            uint g = tid & 7u, j = tid >> 3;
            uint mm = gl_WorkGroupID.y * 32u + g * OB + o, r = r0 + j;
            if (mm < p.M && r < p.N) {
                float s = 0.0;
                for (uint l = 0u; l < 32u; l++) s += red[j * 256u + g * 32u + l];
                if (p.boff != NONE) s += wt[p.boff + mm];
                float v = act_(p.act, s) * p.alpha;
                if (p.goff != NONE) {
                    uint ga = addr(p.goff, p.grps, p.ggs, p.gld, r) + mm;
                    v *= p.gbuf == 1u ? wt[ga] : ar[ga];
                }
                uint ya = addr(p.yoff, p.yrps, p.ygs, p.yld, r) + mm;
                ar[ya] = p.accum != 0u ? ar[ya] + v : v;
            }
        }
        barrier();
    }
}
