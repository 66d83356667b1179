// gemm_tile.glsl - the contract of gemm.comp (linear.comp for many rows, vec4 operands only:
// p.v4) as a register-tiled GEMM, included by gemm_*.comp after they define the tile:
//   BM x BN   rows x outputs of a workgroup's tile,
//   TM x TN   rows x outputs of an invocation (multiples of 4: vec4 groups spread over the tile,
//             group i of the rows at vec4 index ty + i * TY, so that neighbouring invocations
//             read neighbouring vec4s of shared memory),
//   BK        K per step (4 or 8).
// The 256 invocations are the BM/TM x BN/TN of the tile (one K range each: tiles that split K
// across invocations lost on the H200 and were removed, bench/RESULTS.md).
// X and W tiles are held k-major in shared memory ([k][row] with one vec4 of padding per k, so
// the transposing stores of a warp hit 32 banks), two stages: the next step's global loads go
// into registers before the current step's math, then into the other stage, one barrier per
// step. The epilogue (bias, activation, alpha, gate, accumulate) is gemm.comp's, with vec4
// stores where Y's offsets allow.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
layout(std430, set = 0, binding = 0) readonly buffer Weights4 { vec4 wt4[]; };
layout(std430, set = 0, binding = 1) buffer Arena4 { vec4 ar4[]; };
layout(local_size_x = 256) in;
#include "gemm_out.glsl"

#define TX (BN / TN)
#define TY (BM / TM)
#define TS (TX * TY) // invocations
#define KQ (BK / 4)  // vec4s of a row per step
#define BM4 (BM / 4 + 1)
#define BN4 (BN / 4 + 1)
#define XS (BK * BM4)
#define STAGE (XS + BK * BN4)
#define NXV (BM * KQ) // vec4 loads of an X tile step
#define NWV (BN * KQ)
#define LX ((NXV + TS - 1) / TS)
#define LW ((NWV + TS - 1) / TS)
#if TM % 4 != 0 || TN % 4 != 0 || TS != 256 || LX > 2 || LW > 2 || BM % TM != 0 || BN % TN != 0
#error "gemm_tile.glsl: TM, TN multiples of 4, BM/TM * BN/TN = 256 invocations, at most 2 X and 2 W vec4s staged an invocation"
#endif
shared vec4 sm[2 * STAGE];


// vec4 v of an X row / W output `row` (k = k0 .. k0 + 3 of the step) into stage memory at b,
// k-major: stride BM4 or BN4 vec4s per k
void put4(uint b, uint stride, uint q, vec4 v) {
    const uint row = q / KQ, k = (q % KQ) * 4u, o = b + k * stride + (row >> 2), e = row & 3u;
    sm[o][e] = v.x;
    sm[o + stride][e] = v.y;
    sm[o + 2u * stride][e] = v.z;
    sm[o + 3u * stride][e] = v.w;
}
// this invocation's registered loads into the stage at b (no loop: LX, LW <= 2, constant
// indices only, so that the registers never become local memory), X's load transform applied
// here rather than at the load (which would wait for the loads in flight)
void stage(uint b, vec4 rx[LX], vec4 rw[LW]) {
    const uint t = gl_LocalInvocationID.x;
    if (NXV % TS == 0u || t < NXV) put4(b, BM4, t, xload4(rx[0]));
#if LX > 1
    if (NXV % TS == 0u || t + TS < NXV) put4(b, BM4, t + TS, xload4(rx[1]));
#endif
    if (NWV % TS == 0u || t < NWV) put4(b + XS, BN4, t, rw[0]);
#if LW > 1
    if (NWV % TS == 0u || t + TS < NWV) put4(b + XS, BN4, t + TS, rw[1]);
#endif
}

// the X and W vec4s of the K step starting at vec4 kq into registers (zeros past K or the tile)
void load_step(uint kq, uint t, uint K4, uint xa[LX], uint wa[LW], out vec4 rx[LX], out vec4 rw[LW]) {
    [[unroll]] for (uint l = 0u; l < LX; l++) {
        uint q = t + l * TS;
        rx[l] = (xa[l] != NONE && kq + q % KQ < K4) ? ar4[xa[l] + kq] : vec4(0.0);
    }
    [[unroll]] for (uint l = 0u; l < LW; l++) {
        uint q = t + l * TS;
        rw[l] = (wa[l] != NONE && kq + q % KQ < K4) ? wt4[wa[l] + kq] : vec4(0.0);
    }
}

void main() {
    const uint t = gl_LocalInvocationID.x;
    const uint tx = t % TX, ty = t / TX;
    const uint m0 = gl_WorkGroupID.x * BN, r0 = gl_WorkGroupID.y * BM;
    const uint K4 = p.K / 4u;
    // this invocation's loads: X row / W output q / KQ, vec4 q % KQ of the step, q = t + l TS
    uint xa[LX], wa[LW];
    [[unroll]] for (uint l = 0u; l < LX; l++) {
        uint q = t + l * TS, r = r0 + q / KQ;
        xa[l] = (q < NXV && r < p.N) ? addr(p.xoff, p.xrps, p.xgs, p.xld, r) / 4u + q % KQ : NONE;
    }
    [[unroll]] for (uint l = 0u; l < LW; l++) {
        uint q = t + l * TS, m = m0 + q / KQ;
        wa[l] = (q < NWV && m < p.M) ? (p.woff + m * p.K) / 4u + q % KQ : NONE;
    }
    vec4 acc[TM][TN / 4];
    [[unroll]] for (uint i = 0u; i < TM; i++)
        [[unroll]] for (uint j = 0u; j < TN / 4u; j++) acc[i][j] = vec4(0.0);
    vec4 rx[LX], rw[LW];
    const uint nst = (K4 + KQ - 1u) / KQ;
    // step 0 into registers, then stage 0
    load_step(0u, t, K4, xa, wa, rx, rw);
    stage(0u, rx, rw);
    barrier();
    for (uint st = 0u; st < nst; st++) {
        const bool more = st + 1u < nst;
        if (more) // the next step's global loads, in flight during this step's math
            load_step((st + 1u) * KQ, t, K4, xa, wa, rx, rw);
        const uint xb = (st & 1u) * STAGE, wb = xb + XS;
        [[unroll]] for (uint kk = 0u; kk < BK; kk++) {
            vec4 a[TM / 4], b[TN / 4];
            [[unroll]] for (uint i = 0u; i < TM / 4u; i++) a[i] = sm[xb + kk * BM4 + ty + i * TY];
            [[unroll]] for (uint j = 0u; j < TN / 4u; j++) b[j] = sm[wb + kk * BN4 + tx + j * TX];
            [[unroll]] for (uint i = 0u; i < TM / 4u; i++)
                [[unroll]] for (uint c = 0u; c < 4u; c++)
                    [[unroll]] for (uint j = 0u; j < TN / 4u; j++)
                        acc[i * 4u + c][j] += a[i][c] * b[j];
        }
        if (more) {
            stage(((st + 1u) & 1u) * STAGE, rx, rw);
        }
        barrier();
    }
    // the epilogue a row at a time in a loop that stays a loop (the code of 8 activations, not
    // 8 TM TN / 4), taking row 0 of acc and moving the others up: constant indices only. The
    // bias is loaded once; a row's gate and Y loads all go out before its first store
    // (gemm_out.glsl).
    const bool yv4 = ((p.yoff | p.ygs | p.yld) & 3u) == 0u;
    vec4 bv[TN / 4];
    [[unroll]] for (uint j = 0u; j < TN / 4u; j++) bv[j] = bias4(m0 + (tx + j * TX) * 4u);
    [[dont_unroll]] for (uint n = 0u; n < TM; n++) {
        const uint r = r0 + (ty + (n / 4u) * TY) * 4u + n % 4u;
        if (r < p.N) {
            const uint ya = addr(p.yoff, p.yrps, p.ygs, p.yld, r);
            const uint ga = p.goff != NONE ? addr(p.goff, p.grps, p.ggs, p.gld, r) : 0u;
            vec4 v[TN / 4];
            [[unroll]] for (uint j = 0u; j < TN / 4u; j++) {
                const uint m = m0 + (tx + j * TX) * 4u;
                v[j] = m < p.M ? val4(ga, m, acc[0][j] + bv[j]) : vec4(0.0);
            }
            [[unroll]] for (uint j = 0u; j < TN / 4u; j++) {
                const uint m = m0 + (tx + j * TX) * 4u;
                if (m < p.M) v[j] += old4(ya, m, yv4);
            }
            [[unroll]] for (uint j = 0u; j < TN / 4u; j++) {
                const uint m = m0 + (tx + j * TX) * 4u;
                if (m < p.M) put4y(ya, m, v[j], yv4);
            }
        }
        [[unroll]] for (uint i = 0u; i < TM - 1u; i++)
            [[unroll]] for (uint j = 0u; j < TN / 4u; j++) acc[i][j] = acc[i + 1u][j];
    }
}
