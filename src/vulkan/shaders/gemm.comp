#version 450
#extension GL_GOOGLE_include_directive : require
// gemm.comp - the same contract as linear.comp for many rows: 64x64 output tiles (rows x
// outputs), K in steps of 16 through shared memory held k-major as vec4s (a thread's 4 rows and
// 4 outputs are one vec4 read each: 2 shared reads per 16 FMAs), 4x4 results per invocation;
// X and W tiles come in as one vec4 per invocation when p.v4.
#include "common.glsl"
layout(std430, set = 0, binding = 0) readonly buffer Weights4 { vec4 wt4[]; };
layout(std430, set = 0, binding = 1) readonly buffer Arena4 { vec4 ar4[]; };
layout(local_size_x = 256) in;
#include "linear_pc.glsl"
shared vec4 xs[16][17]; // [k][row / 4] (padded)
shared vec4 ws[16][17]; // [k][output / 4]
void main() {
    uint tid = gl_LocalInvocationID.x;
    uint m0 = gl_WorkGroupID.x * 64u, r0 = gl_WorkGroupID.y * 64u;
    uint ty = tid >> 4, tx = tid & 15u; // this invocation's rows 4 ty.., outputs 4 tx..
    vec4 acc[4];
    for (int i = 0; i < 4; i++) acc[i] = vec4(0.0);
    if (p.v4 != 0u) {
        // loader: row / output lr = tid / 4, k = 4 (tid % 4) .. + 3 of the step
        uint lr = tid >> 2, lk = (tid & 3u) * 4u;
        bool xv = r0 + lr < p.N, wv = m0 + lr < p.M;
        uint xa = xv ? addr(p.xoff, p.xrps, p.xgs, p.xld, r0 + lr) / 4u : 0u;
        uint wa = wv ? (p.woff + (m0 + lr) * p.K) / 4u : 0u;
        for (uint k0 = 0u; k0 < p.K; k0 += 16u) {
            bool kv = k0 + lk < p.K;
            vec4 x = (xv && kv) ? xload4(ar4[xa + (k0 + lk) / 4u]) : vec4(0.0);
            vec4 w = (wv && kv) ? wt4[wa + (k0 + lk) / 4u] : vec4(0.0);
            for (uint c = 0u; c < 4u; c++) {
                xs[lk + c][lr >> 2][lr & 3u] = x[c];
                ws[lk + c][lr >> 2][lr & 3u] = w[c];
            }
            barrier();
            for (uint kk = 0u; kk < 16u; kk++) {
                vec4 a = xs[kk][ty], b = ws[kk][tx];
                acc[0] += a.x * b;
                acc[1] += a.y * b;
                acc[2] += a.z * b;
                acc[3] += a.w * b;
            }
            barrier();
        }
    } else {
        // loader: k = tid % 16 of the step, rows / outputs tid / 16 + 16 q
        uint lk = tid & 15u, lr = tid >> 4;
        uint xa[4];
        bool xv[4], wv[4];
        for (uint q = 0u; q < 4u; q++) {
            uint r = r0 + lr + 16u * q;
            xv[q] = r < p.N;
            xa[q] = xv[q] ? addr(p.xoff, p.xrps, p.xgs, p.xld, r) : 0u;
            wv[q] = m0 + lr + 16u * q < p.M;
        }
        for (uint k0 = 0u; k0 < p.K; k0 += 16u) {
            uint k = k0 + lk;
            for (uint q = 0u; q < 4u; q++) {
                uint i = lr + 16u * q;
                xs[lk][i >> 2][i & 3u] = (xv[q] && k < p.K) ? xload(ar[xa[q] + k]) : 0.0;
                ws[lk][i >> 2][i & 3u] = (wv[q] && k < p.K) ? wt[p.woff + (m0 + i) * p.K + k] : 0.0;
            }
            barrier();
            for (uint kk = 0u; kk < 16u; kk++) {
                vec4 a = xs[kk][ty], b = ws[kk][tx];
                acc[0] += a.x * b;
                acc[1] += a.y * b;
                acc[2] += a.z * b;
                acc[3] += a.w * b;
            }
            barrier();
        }
    }
    for (uint i = 0u; i < 4u; i++) {
        uint r = r0 + ty * 4u + i;
        if (r >= p.N) continue;
        uint ya = addr(p.yoff, p.yrps, p.ygs, p.yld, r);
        uint ga = p.goff != NONE ? addr(p.goff, p.grps, p.ggs, p.gld, r) : 0u;
        for (uint j = 0u; j < 4u; j++) {
            uint m = m0 + tx * 4u + j;
            if (m >= p.M) continue;
            float s = acc[i][j];
            if (p.boff != NONE) s += wt[p.boff + m];
            float v = act_(p.act, s) * p.alpha;
            if (p.goff != NONE) v *= p.gbuf == 1u ? wt[ga + m] : ar[ga + m];
            ar[ya + m] = p.accum != 0u ? ar[ya + m] + v : v;
        }
    }
}
