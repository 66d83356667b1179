#version 450
#extension GL_GOOGLE_include_directive : require
// gemm.comp - the same contract as linear.comp for many rows: 64x64 output tiles (rows x
// outputs), K in steps of 16 through shared memory, 4x4 results per invocation.
#include "common.glsl"
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
shared float xs[16][65];
shared float ws[16][65];
uint addr(uint off, uint rps, uint gs, uint ld, uint r) { return off + (r / rps) * gs + (r % rps) * ld; }
void main() {
    uint tid = gl_LocalInvocationID.x;
    uint m0 = gl_WorkGroupID.x * 64u, r0 = gl_WorkGroupID.y * 64u;
    uint tr = (tid >> 4) * 4u, tm = (tid & 15u) * 4u; // this invocation's 4 rows, 4 outputs
    float acc[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = 0.0;
    // loader: each invocation loads 4 (row, k) pairs of X and 4 of W per K step
    uint lk = tid & 15u, lr = tid >> 4; // k within the step, row (0..15) + 16 * q
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
            xs[lk][lr + 16u * q] = (xv[q] && k < p.K) ? ar[xa[q] + k] : 0.0;
            ws[lk][lr + 16u * q] = (wv[q] && k < p.K) ? wt[p.woff + (m0 + lr + 16u * q) * p.K + k] : 0.0;
        }
        barrier();
        for (uint kk = 0u; kk < 16u; kk++) {
            float a[4], b[4];
            for (uint i = 0u; i < 4u; i++) { a[i] = xs[kk][tr + i]; b[i] = ws[kk][tm + i]; }
            for (uint i = 0u; i < 4u; i++)
                for (uint j = 0u; j < 4u; j++) acc[i][j] += a[i] * b[j];
        }
        barrier();
    }
    for (uint i = 0u; i < 4u; i++) {
        uint r = r0 + tr + i;
        if (r >= p.N) continue;
        uint ya = addr(p.yoff, p.yrps, p.ygs, p.yld, r);
        uint ga = p.goff != NONE ? addr(p.goff, p.grps, p.ggs, p.gld, r) : 0u;
        for (uint j = 0u; j < 4u; j++) {
            uint m = m0 + tm + j;
            if (m >= p.M) continue;
            float s = acc[i][j];
            if (p.boff != NONE) s += wt[p.boff + m];
            float v = act_(p.act, s) * p.alpha;
            if (p.goff != NONE) v *= p.gbuf == 1u ? wt[ga + m] : ar[ga + m];
            ar[ya + m] = p.accum != 0u ? ar[ya + m] + v : v;
        }
    }
}
