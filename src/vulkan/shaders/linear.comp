#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// linear.comp - Y[r, m] (=|+=) g[r, m] * alpha * act(X[r, :K] . W[m, :K] + b[m]) for small N:
// 8 outputs per workgroup, 32 lanes split K, 8 rows per workgroup (gl_WorkGroupID.y), W read
// once per row block (with 32-wide subgroups, a group is a subgroup and its lanes' partials are
// summed by subgroupAdd, else through shared memory). Rows use grouped addressing:
// row r -> off + (r / rps) * gs + (r % rps) * ld.
#include "common.glsl"
// the same buffers seen as vec4 (K, row offsets and strides all multiples of 4: p.v4)
layout(std430, set = 0, binding = 0) readonly buffer Weights4 { vec4 wt4[]; };
layout(std430, set = 0, binding = 1) readonly buffer Arena4 { vec4 ar4[]; };
layout(local_size_x = 256) in;
#include "linear_pc.glsl"
#define RB 8
shared float red[RB * 256];
void main() {
    uint tid = gl_LocalInvocationID.x, lane = tid & 31u, grp = tid >> 5;
    uint m = gl_WorkGroupID.x * 8u + grp;
    uint r0 = gl_WorkGroupID.y * RB;
    float acc[RB];
    uint xb[RB];
    for (uint j = 0u; j < RB; j++) {
        acc[j] = 0.0;
        xb[j] = r0 + j < p.N ? addr(p.xoff, p.xrps, p.xgs, p.xld, r0 + j) : 0u;
    }
    uint nr = min(uint(RB), p.N - r0);
    if (m < p.M) {
        uint wr = p.woff + m * p.K;
        if (p.v4 != 0u) {
            uint K4 = p.K / 4u, w4 = wr / 4u, k = lane;
            for (; k + 96u < K4; k += 128u) { // four independent loads in flight per lane
                vec4 wa = wt4[w4 + k], wb = wt4[w4 + k + 32u], wc = wt4[w4 + k + 64u],
                     wd = wt4[w4 + k + 96u];
                for (uint j = 0u; j < RB; j++)
                    if (j < nr) {
                        uint x = xb[j] / 4u + k;
                        acc[j] += (dot(wa, xload4(ar4[x])) + dot(wb, xload4(ar4[x + 32u]))) +
                                  (dot(wc, xload4(ar4[x + 64u])) + dot(wd, xload4(ar4[x + 96u])));
                    }
            }
            for (; k + 32u < K4; k += 64u) { // two independent loads in flight per lane
                vec4 wa = wt4[w4 + k], wb = wt4[w4 + k + 32u];
                for (uint j = 0u; j < RB; j++)
                    if (j < nr) acc[j] += dot(wa, xload4(ar4[xb[j] / 4u + k])) +
                                          dot(wb, xload4(ar4[xb[j] / 4u + k + 32u]));
            }
            for (; k < K4; k += 32u) {
                vec4 wa = wt4[w4 + k];
                for (uint j = 0u; j < RB; j++)
                    if (j < nr) acc[j] += dot(wa, xload4(ar4[xb[j] / 4u + k]));
            }
        } else for (uint k = lane; k < p.K; k += 32u) {
            float wv = wt[wr + k];
            for (uint j = 0u; j < RB; j++)
                if (j < nr) acc[j] += wv * xload(ar[xb[j] + k]);
        }
    }
    if (gl_SubgroupSize == 32u && gl_NumSubgroups == 8u) {
        float s = 0.0;
        for (uint j = 0u; j < RB; j++) {
            if (j >= nr) break;
            float t = subgroupAdd(acc[j]);
            if (gl_SubgroupInvocationID == j) s = t;
        }
        uint j = gl_SubgroupInvocationID, r = r0 + j;
        if (m < p.M && j < nr) {
            if (p.boff != NONE) s += wt[p.boff + m];
            float v = act_(p.act, s) * p.alpha;
            if (p.goff != NONE) {
                uint ga = addr(p.goff, p.grps, p.ggs, p.gld, r) + m;
                v *= p.gbuf == 1u ? wt[ga] : ar[ga];
            }
            uint ya = addr(p.yoff, p.yrps, p.ygs, p.yld, r) + m;
            ar[ya] = p.accum != 0u ? ar[ya] + v : v;
        }
        return;
    }
    for (uint j = 0u; j < RB; j++) red[j * 256u + tid] = acc[j];
    barrier();
    if (tid < 8u * RB) {
        uint o = tid & 7u, j = tid >> 3;
        uint mm = gl_WorkGroupID.x * 8u + o, r = r0 + j;
        if (mm < p.M && r < p.N) {
            float s = 0.0;
            for (uint l = 0u; l < 32u; l++) s += red[j * 256u + o * 32u + l];
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
}
