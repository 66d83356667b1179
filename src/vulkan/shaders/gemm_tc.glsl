// gemm_tc.glsl - gemm.comp's contract (vec4 operands only: p.v4) on tensor cores through
// GL_NV_cooperative_matrix: X and W are rounded to float16 on their way into shared memory and
// multiplied in 16 x 16 x 16 fragments with float32 sums (the half-precision mode only: the
// rounding takes most of the 1e-3 parity budget, 9.5e-4 on the full-size fixture). Included by
// gemm_tc_*.comp after they define the tile:
//   BM x BN   rows x outputs of a workgroup's tile,
//   WR x WC   subgroups of 32 invocations along rows and outputs; each owns BM/WR x BN/WC
//             outputs as FR x FC accumulator fragments,
//   BK        K per step (a multiple of 32): few-row tiles take long steps, since their time
//             is one load latency a step (K 1024 in 32-wide steps: 32 latencies a linear).
// A step's X and W vec4s are loaded into registers while the previous step's fragments
// multiply, then rounded into the one shared stage (two barriers a step). Shared rows are
// SK = BK + 8 halves (rows start 16-byte aligned, 8 consecutive rows on distinct banks). The
// epilogue stores the fragments from registers where it can (gemm_direct.glsl); else it takes
// a subgroup's 16 rows at a time through a float32 patch: every load of those rows (bias,
// loaded before the K loop; gates; Y when accumulating) is issued before their first store.
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
layout(std430, set = 0, binding = 0) readonly buffer Weights4 { vec4 wt4[]; };
layout(std430, set = 0, binding = 1) buffer Arena4 { vec4 ar4[]; };
#define WGS (32 * WR * WC)
layout(local_size_x = WGS) in;
#include "gemm_out.glsl"

#define SK (BK + 8)
#define KQ (BK / 4)     // vec4s of a row per step
#define FR (BM / WR / 16)
#define FC (BN / WC / 16)
#define NXV (BM * KQ)   // vec4 loads of an X tile step
#define NWV (BN * KQ)
#define LX (NXV / WGS)  // an invocation's share
#define LW (NWV / WGS)
#if BK % 32 != 0 || NXV % WGS != 0 || NWV % WGS != 0 || FR < 1 || FC < 1 || BM % (16 * WR) != 0 || BN % (16 * WC) != 0
#error "gemm_tc.glsl: tiles of whole 16 x 16 fragments per subgroup, loads spread evenly"
#endif
#define F16M fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define F32M fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
shared float16_t sx[BM * SK]; // [row][k] of the step
shared float16_t sw[BN * SK]; // [output][k]
shared float sc[WR * WC * 256 * FC]; // per subgroup: 16 rows x 16 FC outputs
#include "gemm_direct.glsl"

// the X and W vec4s of the step at vec4 kq (zeros past K or the tile)
void load_step(uint kq, uint K4, uint xa[LX], uint wa[LW], out vec4 rx[LX], out vec4 rw[LW]) {
    const uint k = kq + gl_LocalInvocationID.x % KQ; // the same for every l: WGS % KQ == 0
    [[unroll]] for (uint l = 0u; l < LX; l++) rx[l] = (xa[l] != NONE && k < K4) ? ar4[xa[l] + kq] : vec4(0.0);
    [[unroll]] for (uint l = 0u; l < LW; l++) rw[l] = (wa[l] != NONE && k < K4) ? wt4[wa[l] + kq] : vec4(0.0);
}
void put(uint q, vec4 v, bool w) {
    const uint o = (q / KQ) * SK + (q % KQ) * 4u;
    if (w) {
        sw[o] = float16_t(v.x); sw[o + 1u] = float16_t(v.y); sw[o + 2u] = float16_t(v.z); sw[o + 3u] = float16_t(v.w);
    } else {
        sx[o] = float16_t(v.x); sx[o + 1u] = float16_t(v.y); sx[o + 2u] = float16_t(v.z); sx[o + 3u] = float16_t(v.w);
    }
}

void main() {
    const uint t = gl_LocalInvocationID.x, sg = t / 32u, lane = t % 32u;
    const uint wr = sg / WC, wc = sg % WC;
    const uint m0 = gl_WorkGroupID.x * BN, r0 = gl_WorkGroupID.y * BM;
    const uint K4 = p.K / 4u;
    // this invocation's loads: X row / W output q / KQ, vec4 q % KQ of the step, q = t + l WGS
    uint xa[LX], wa[LW];
    [[unroll]] for (uint l = 0u; l < LX; l++) {
        const uint q = t + l * WGS, r = r0 + q / KQ;
        xa[l] = r < p.N ? addr(p.xoff, p.xrps, p.xgs, p.xld, r) / 4u + q % KQ : NONE;
    }
    [[unroll]] for (uint l = 0u; l < LW; l++) {
        const uint q = t + l * WGS, m = m0 + q / KQ;
        wa[l] = m < p.M ? (p.woff + m * p.K) / 4u + q % KQ : NONE;
    }
    F32M acc[FR][FC];
    [[unroll]] for (uint i = 0u; i < FR; i++)
        [[unroll]] for (uint j = 0u; j < FC; j++) acc[i][j] = F32M(0.0);
    // the bias of the lane's epilogue outputs (see the end), loaded while the K loop runs
    vec4 bv[2u * FC];
    {
        const uint mc = m0 + wc * FC * 16u + (lane % 2u) * 8u * FC;
        [[unroll]] for (uint q = 0u; q < 2u * FC; q++) bv[q] = bias4(mc + 4u * q);
    }
    vec4 rx[LX], rw[LW];
    const uint nst = (K4 + KQ - 1u) / KQ;
    load_step(0u, K4, xa, wa, rx, rw);
    for (uint st = 0u; st < nst; st++) {
        // X's load transform here, not at the load: a use right after the load would wait for
        // it and take the next step's loads out of flight during this step's products (twice
        // as slow on the H200's 128-row step gemms, bench/RESULTS.md)
        [[unroll]] for (uint l = 0u; l < LX; l++) put(t + l * WGS, xload4(rx[l]), false);
        [[unroll]] for (uint l = 0u; l < LW; l++) put(t + l * WGS, rw[l], true);
        barrier();
        if (st + 1u < nst) load_step((st + 1u) * KQ, K4, xa, wa, rx, rw);
        [[unroll]] for (uint kk = 0u; kk < BK; kk += 16u) {
            F16M a[FR], b[FC];
            [[unroll]] for (uint i = 0u; i < FR; i++)
                coopMatLoadNV(a[i], sx, ((wr * FR + i) * 16u) * SK + kk, SK, false);
            [[unroll]] for (uint j = 0u; j < FC; j++) // W^T: column-major from [output][k]
                coopMatLoadNV(b[j], sw, ((wc * FC + j) * 16u) * SK + kk, SK, true);
            [[unroll]] for (uint i = 0u; i < FR; i++)
                [[unroll]] for (uint j = 0u; j < FC; j++) acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);
        }
        barrier();
    }
    // epilogue: directly where gemm_direct.glsl can; else per 16 rows, lane's row lane / 2,
    // its 8 FC outputs from (lane % 2) 8 FC
    {
        const uint rs = r0 + wr * FR * 16u, ms = m0 + wc * FC * 16u;
        if (direct_ok(rs, FR * 16u, ms, FC * 16u)) {
            [[unroll]] for (uint i = 0u; i < FR; i++) {
                const uint ya = addr(p.yoff, p.yrps, p.ygs, p.yld, rs + i * 16u);
                [[unroll]] for (uint j = 0u; j < FC; j++) store_direct(acc[i][j], ya, ms + j * 16u);
            }
            return;
        }
    }
    const bool yv4 = ((p.yoff | p.ygs | p.yld) & 3u) == 0u;
    const uint pb = sg * 256u * FC, pr = lane / 2u, pc = (lane % 2u) * 8u * FC;
    const uint mc = m0 + wc * FC * 16u + pc; // the lane's first output
    [[unroll]] for (uint i = 0u; i < FR; i++) {
        [[unroll]] for (uint j = 0u; j < FC; j++) coopMatStoreNV(acc[i][j], sc, pb + j * 16u, 16u * FC, false);
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        const uint r = r0 + (wr * FR + i) * 16u + pr;
        const bool rv = r < p.N;
        const uint ya = rv ? addr(p.yoff, p.yrps, p.ygs, p.yld, r) : 0u;
        const uint ga = rv && p.goff != NONE ? addr(p.goff, p.grps, p.ggs, p.gld, r) : 0u;
        vec4 v[2u * FC];
        [[unroll]] for (uint q = 0u; q < 2u * FC; q++) {
            const uint s0 = pb + pr * 16u * FC + pc + 4u * q;
            v[q] = vec4(sc[s0], sc[s0 + 1u], sc[s0 + 2u], sc[s0 + 3u]) + bv[q];
            if (rv && mc + 4u * q < p.M) v[q] = val4(ga, mc + 4u * q, v[q]);
        }
        [[unroll]] for (uint q = 0u; q < 2u * FC; q++)
            if (rv && mc + 4u * q < p.M) v[q] += old4(ya, mc + 4u * q, yv4);
        [[unroll]] for (uint q = 0u; q < 2u * FC; q++)
            if (rv && mc + 4u * q < p.M) put4y(ya, mc + 4u * q, v[q], yv4);
        subgroupBarrier();
    }
}
