// gemm_tch.glsl - gemm_tc.glsl's tensor-core gemm (its contract, its float16 operands, its
// 16 x 16 x 16 products in the same K order, so the same sums bit for bit) with W read from
// the weights' float16 copy (glin.f, vk_weights.c: [M][KW] uvec4s of 8 halves, rows of K
// rounded up to 8 with zeros, every value rounded to nearest even as float16_t() rounds it).
// Included by gemm_tch_*.comp after they define the tile as gemm_tc.glsl's do (BM x BN rows x
// outputs, WR x WC subgroups of 32 invocations, each FR x FC fragments; BK: K per step, a
// multiple of 16). Against gemm_tc.glsl, per K step of a workgroup:
//   W: 8 halves a 16-byte load, stored to shared memory as loaded: half its bytes from L2 (every
//      row block reads W again: ~2 GB a frame for the largest conv at 1,024 streams) and no
//      conversions (float32 -> float16 issues at a fraction of the float32 rate on NVIDIA);
//   X: 8 floats an invocation's chunk (two vec4 loads), rounded as two f16vec4s (conversions
//      in pairs) into one 16-byte shared store, where gemm_tc.glsl stores 4 halves apart;
//   shared memory: one uvec4 array (8 halves each): the step's X rows, then its W rows, each
//      SQ = BK / 8 + 1 uvec4s (16-byte aligned rows, 8 consecutive rows on distinct banks for
//      the fragment loads); after the K loop the epilogue's float32 patches reuse it, read
//      back 16 bytes at a time; the bias waits in shared memory, not in 8 FC registers.
// Fewer registers (no float32 W, no bias): 148 and 157 for the wide and tall tiles on the H200
// with K steps of 64, where gemm_tc.glsl's took 199; 9-10% less gemm time at 1,024 streams.
// With K steps of 32 (the tiles now) 102 and 106: two workgroups an SM, so one's K loop and
// epilogue hide the other's load latency (the codec's convs have few K steps: K 256 is 4 of
// 64): 21-22% less gemm time, the engine 12-14% faster at 256-1,024 streams (bench/RESULTS.md).
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
layout(std430, set = 0, binding = 0) readonly buffer WeightsH { uvec4 wh8[]; }; // 8 halves each
layout(std430, set = 0, binding = 1) buffer Arena4 { vec4 ar4[]; };
#define WGS (32 * WR * WC)
layout(local_size_x = WGS) in;
#include "gemm_out.glsl"

#define KC (BK / 8)        // 8-half chunks of a row per step
#define SQ (KC + 1)        // uvec4s of a shared row
#define FR (BM / WR / 16)
#define FC (BN / WC / 16)
#define LX (BM * KC / WGS) // an invocation's X chunks of a step
#define LW (BN * KC / WGS) // its W chunks
// uvec4s of an epilogue patch row: 16 FC floats, and 2 more so that the 8 lanes of a shared
// access phase (4 rows, 32 bytes each) fall on distinct banks
#define PQ (4 * FC + 2)
#define STAGE ((BM + BN) * SQ)
#define PATCHES (WR * WC * 16 * PQ)
#if BK % 16 != 0 || WGS % KC != 0 || (BM * KC) % WGS != 0 || (BN * KC) % WGS != 0 || LX < 1 || LW < 1 || FR < 1 || FC < 1 || BM % (16 * WR) != 0 || BN % (16 * WC) != 0 || BN / 4 > WGS
#error "gemm_tch.glsl: tiles of whole 16 x 16 fragments per subgroup, chunk loads spread evenly"
#endif
#define F16M fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define F32M fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
shared uvec4 sh[STAGE > PATCHES ? STAGE : PATCHES]; // [BM + BN][SQ] of a step, then the patches
shared vec4 sb[BN / 4];                              // the bias of the tile's outputs
#include "gemm_direct.glsl"

// chunk c = s KC + t % KC of step s: X rows' vec4s 2 c and 2 c + 1, W rows' uvec4 c (zeros past
// K, the rows or the outputs); xa / wa: the rows' first vec4 / uvec4, NONE past the tile's end
void load_step(uint s, uint K4, uint KW, uint xa[LX], uint wa[LW], out vec4 rx[2 * LX], out uvec4 rw[LW]) {
    const uint c = s * KC + gl_LocalInvocationID.x % KC; // the same for every l: WGS % KC == 0
    [[unroll]] for (uint l = 0u; l < LX; l++) {
        rx[2u * l] = (xa[l] != NONE && 2u * c < K4) ? ar4[xa[l] + 2u * c] : vec4(0.0);
        rx[2u * l + 1u] = (xa[l] != NONE && 2u * c + 1u < K4) ? ar4[xa[l] + 2u * c + 1u] : vec4(0.0);
    }
    [[unroll]] for (uint l = 0u; l < LW; l++) rw[l] = (wa[l] != NONE && c < KW) ? wh8[wa[l] + c] : uvec4(0u);
}
// 8 floats as 8 halves (each rounded as float16_t() rounds it; packFloat2x16 is a bit cast)
uvec4 pack8(vec4 a, vec4 b) {
    const f16vec4 ha = f16vec4(a), hb = f16vec4(b);
    return uvec4(packFloat2x16(ha.xy), packFloat2x16(ha.zw), packFloat2x16(hb.xy), packFloat2x16(hb.zw));
}

void main() {
    const uint t = gl_LocalInvocationID.x, sg = t / 32u, lane = t % 32u;
    const uint wr = sg / WC, wc = sg % WC;
    const uint m0 = gl_WorkGroupID.x * BN, r0 = gl_WorkGroupID.y * BM;
    const uint K4 = p.K / 4u, KW = (p.K + 7u) / 8u; // X rows' vec4s, W rows' uvec4s
    // this invocation's chunks: X row / W output q / KC of the tile, chunk q % KC of a step,
    // q = t + l WGS (p.woff: W's float16 copy, 16-byte aligned)
    uint xa[LX], wa[LW];
    [[unroll]] for (uint l = 0u; l < LX; l++) {
        const uint r = r0 + (t + l * WGS) / KC;
        xa[l] = r < p.N ? addr(p.xoff, p.xrps, p.xgs, p.xld, r) / 4u : NONE;
    }
    [[unroll]] for (uint l = 0u; l < LW; l++) {
        const uint m = m0 + (t + l * WGS) / KC;
        wa[l] = m < p.M ? p.woff / 4u + m * KW : NONE;
    }
    if (t < BN / 4u) sb[t] = bias4(m0 + 4u * t); // read after the K loop's barriers (K >= 1)
    F32M acc[FR][FC];
    [[unroll]] for (uint i = 0u; i < FR; i++)
        [[unroll]] for (uint j = 0u; j < FC; j++) acc[i][j] = F32M(0.0);
    vec4 rx[2 * LX];
    uvec4 rw[LW];
    const uint nst = (KW + KC - 1u) / KC;
    load_step(0u, K4, KW, xa, wa, rx, rw);
    for (uint st = 0u; st < nst; st++) {
        // X's load transform here, not at the load (gemm_tc.glsl says why)
        [[unroll]] for (uint l = 0u; l < LX; l++) {
            const uint q = t + l * WGS;
            sh[(q / KC) * SQ + q % KC] = pack8(xload4(rx[2u * l]), xload4(rx[2u * l + 1u]));
        }
        [[unroll]] for (uint l = 0u; l < LW; l++) {
            const uint q = t + l * WGS;
            sh[(BM + q / KC) * SQ + q % KC] = rw[l];
        }
        barrier();
        if (st + 1u < nst) load_step(st + 1u, K4, KW, xa, wa, rx, rw);
        // 16 halves (2 uvec4s of a row) at a time; one W fragment live at a time
        [[unroll]] for (uint kq = 0u; kq < KC; kq += 2u) {
            F16M a[FR];
            [[unroll]] for (uint i = 0u; i < FR; i++)
                coopMatLoadNV(a[i], sh, (wr * FR + i) * 16u * SQ + kq, SQ, false);
            [[unroll]] for (uint j = 0u; j < FC; j++) {
                F16M b; // W^T: column-major from [output][k]
                coopMatLoadNV(b, sh, (BM + (wc * FC + j) * 16u) * SQ + kq, SQ, true);
                [[unroll]] for (uint i = 0u; i < FR; i++) acc[i][j] = coopMatMulAddNV(a[i], b, acc[i][j]);
            }
        }
        barrier();
    }
    // epilogue: directly where gemm_direct.glsl can; else per 16 rows, a subgroup's FC
    // fragments into its patch (16 rows of PQ uvec4s in the stage's memory, which the last
    // barrier freed); the lane's row lane / 2, its vec4s c4 = 2 q + lane % 2 of the row's 4 FC
    // (a row's two lanes store 32 contiguous bytes at a time); every load of the 16 rows
    // (gates; Y when accumulating) before their first store
    const uint rs = r0 + wr * FR * 16u, mc = m0 + wc * FC * 16u; // the subgroup's first row, output
    if (direct_ok(rs, FR * 16u, mc, FC * 16u)) {
        [[unroll]] for (uint i = 0u; i < FR; i++) {
            const uint ya = addr(p.yoff, p.yrps, p.ygs, p.yld, rs + i * 16u);
            [[unroll]] for (uint j = 0u; j < FC; j++) store_direct(acc[i][j], ya, mc + j * 16u);
        }
        return;
    }
    const bool yv4 = ((p.yoff | p.ygs | p.yld) & 3u) == 0u;
    const uint pb = sg * 16u * PQ, pr = lane / 2u, h = lane % 2u;
    const uint bq = wc * FC * 4u; // the subgroup's first bias vec4
    [[unroll]] for (uint i = 0u; i < FR; i++) {
        [[unroll]] for (uint j = 0u; j < FC; j++) coopMatStoreNV(acc[i][j], sh, pb + j * 4u, PQ, false);
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        const uint r = r0 + (wr * FR + i) * 16u + pr;
        const bool rv = r < p.N;
        const uint ya = rv ? addr(p.yoff, p.yrps, p.ygs, p.yld, r) : 0u;
        const uint ga = rv && p.goff != NONE ? addr(p.goff, p.grps, p.ggs, p.gld, r) : 0u;
        vec4 v[2u * FC];
        [[unroll]] for (uint q = 0u; q < 2u * FC; q++) {
            const uint c4 = 2u * q + h;
            v[q] = uintBitsToFloat(sh[pb + pr * PQ + c4]) + sb[bq + c4];
            if (rv && mc + 4u * c4 < p.M) v[q] = val4(ga, mc + 4u * c4, v[q]);
        }
        [[unroll]] for (uint q = 0u; q < 2u * FC; q++)
            if (rv && mc + 4u * (2u * q + h) < p.M) v[q] += old4(ya, mc + 4u * (2u * q + h), yv4);
        [[unroll]] for (uint q = 0u; q < 2u * FC; q++)
            if (rv && mc + 4u * (2u * q + h) < p.M) put4y(ya, mc + 4u * (2u * q + h), v[q], yv4);
        subgroupBarrier();
    }
}
