#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require
// mgemm.comp - the contract of linear.comp for 16..a few hundred rows with vec4 operands (p.v4):
// a workgroup computes 32 outputs x 8 rows; 8 groups of 32 lanes, each group 4 outputs, lanes
// split K. Every W vec4 loaded is used for 8 rows and every X vec4 for 4 outputs (registers).
// Row blocks run along gl_WorkGroupID.x so the blocks that read the same W rows run together
// and W comes from DRAM about once (L2 serves the rest). With 32-wide subgroups (a group is a
// subgroup) the 32 lane partials of the group's 32 (row, output) sums are reduce-scattered by
// shuffles (31 per lane; lane l ends with sum l) and every lane writes one result; otherwise
// they go through shared memory.
#include "common.glsl"
layout(std430, set = 0, binding = 0) readonly buffer Weights4 { vec4 wt4[]; };
layout(std430, set = 0, binding = 1) readonly buffer Arena4 { vec4 ar4[]; };
layout(local_size_x = 256) in;
#include "linear_pc.glsl"
#define RB 8
#define OB 4
shared float red[RB * 256];
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
        // the rows' loads first, then X's load transform, then the products: a transform
        // right after each load would wait for it before the next row's load goes out
        vec4 x[RB];
        for (uint j = 0u; j < RB; j++) x[j] = j < nr ? ar4[xb[j] + k] : vec4(0.0);
        for (uint j = 0u; j < RB; j++) x[j] = xload4(x[j]);
        for (uint j = 0u; j < RB; j++)
            if (j < nr)
                for (uint o = 0u; o < OB; o++) acc[j][o] += dot(w[o], x[j]);
    }
    if (gl_SubgroupSize == 32u && gl_NumSubgroups == 8u) {
        float v[RB * OB];
        for (uint j = 0u; j < RB; j++)
            for (uint o = 0u; o < OB; o++) v[j * OB + o] = acc[j][o];
        uint sl = gl_SubgroupInvocationID;
        [[unroll]] for (uint w = 16u; w >= 1u; w >>= 1) {
            bool up = (sl & w) != 0u;
            [[unroll]] for (uint i = 0u; i < w; i++) {
                float send = up ? v[i] : v[i + w];
                float keep = up ? v[i + w] : v[i];
                v[i] = keep + subgroupShuffleXor(send, w);
            }
        }
        uint j = sl / OB, o = sl % OB;
        uint mm = mb + o, r = r0 + j;
        if (mm < p.M && r < p.N) {
            float s = v[0];
            if (p.boff != NONE) s += wt[p.boff + mm];
            float vv = act_(p.act, s) * p.alpha;
            if (p.goff != NONE) {
                uint ga = addr(p.goff, p.grps, p.ggs, p.gld, r) + mm;
                vv *= p.gbuf == 1u ? wt[ga] : ar[ga];
            }
            uint ya = addr(p.yoff, p.yrps, p.ygs, p.yld, r) + mm;
            ar[ya] = p.accum != 0u ? ar[ya] + vv : vv;
        }
        return;
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
