#version 450
#extension GL_GOOGLE_include_directive : require
// attn_tc.comp - attn_group.comp's attention (the same push constants, workgroups and causal
// window: one workgroup per group, block of 16 query rows and head) on tensor cores, for
// float16 cache rows (p.kvh) and heads of 16-channel multiples up to 64. Per tile of 64 keys:
//   S = Q K^T: [16 queries][64 keys], one 16 x 16 fragment a subgroup (subgroups 0-3), dh / 16
//       products of float16 Q (rounded here) and K (as the cache holds it), float32 sums;
//   the online softmax in float32 on invocations t < 128 (query t / 8, keys 8 (t % 8) .. + 7),
//       P rounded to float16 for the next product (the sum of the rows stays float32);
//   O_t = P V: [16][dh], one fragment of 16 channels a subgroup, summed into each invocation's
//       o (query t / 16, channels 4 (t % 16) .. + 3) after its rescale: fragments cannot be
//       scaled per row.
// Why: attn_group.comp's scalar dot products read two shared-memory operands a multiply-add
// and were bound by those reads (the codec at 1,024 streams: ~1.2 ms a dispatch, 13% of the
// GPU's time, bench/RESULTS.md); here the tiles go into shared memory once as float16 and the
// products read them as fragments. Each tile's cache reads are issued into registers before
// the previous tile's arithmetic, so one tile's reads are always in flight.
// Shared matrices are uvec4s of 8 halves (or 4 floats), rows padded by one uvec4 so that 8
// consecutive rows of a fragment load fall on distinct banks (gemm_tch.glsl's layout).
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#define KV_NO_DOT // the buffer views only
#include "kv.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
    uint rps, d, dh, list, len, kvbase, kvslot, kvlayer, cap, window, qoff, ooff;
    float scale;
    uint nqb; // query blocks per group: ceil(rps / 16)
    uint kvh;
} p;
#define F16M fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define F32M fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
const uint QB = 16u, KT = 64u;
const uint HS = 9u;  // uvec4s of a float16 row of 64 (8 + 1)
const uint FS = 17u; // uvec4s of a float32 row of 64 (16 + 1)
shared uvec4 qh[QB * HS];  // Q [16][64] float16
shared uvec4 kh[KT * HS];  // the tile's keys [64][64] float16
shared uvec4 vh[KT * HS];  // its values [64][64] float16
shared uvec4 sf[QB * FS];  // S [16][64] float32, then O_t [16][64] float32
shared uvec4 ph[QB * HS];  // P [16][64] float16
shared float pm[QB][8];    // per softmax invocation: its 8 scores' maximum, then its sum
shared float cs[QB];       // the tile's rescale of each query's o

// keys k0 .. k0 + 63 (those <= last): 8 uvec4s a row (8 channels each), chunk i = t + 256 l of
// 512 a matrix, zeros past the head's channels or the last key
uvec4 rk[2], rv[2];
void load_tile(uint k0, uint last, uint base, uint rs, uint nc) {
    [[unroll]] for (uint l = 0u; l < 2u; l++) {
        const uint i = gl_LocalInvocationID.x + 256u * l, kk = k0 + (i >> 3), c = i & 7u;
        const bool ok = kk <= last && c < nc;
        const uint r4 = (base + (kk % p.cap) * rs) / 4u + c;
        rk[l] = ok ? ku4[r4] : uvec4(0u);
        rv[l] = ok ? vu4[r4] : uvec4(0u);
    }
}

void main() {
    const uint g = gl_WorkGroupID.x / p.nqb, qb = gl_WorkGroupID.x % p.nqb, h = gl_WorkGroupID.y;
    const uint t = gl_LocalInvocationID.x, sg = t / 32u;
    const uint slot = iv[p.list + g];
    const uint q0 = qb * QB, nq = min(QB, p.rps - q0); // rows of this block within the group
    const uint pos0 = iv[p.len + slot] + q0;           // position of the block's first row
    const uint rs = p.d >> 1, nc = p.dh >> 3, nf = p.dh >> 4; // words a row, chunks, fragments
    const uint base = p.kvbase + slot * p.kvslot + p.kvlayer + h * (p.dh >> 1);
    const uint last = pos0 + nq - 1u;
    const uint first = (p.window > 0u && pos0 + 1u > p.window) ? pos0 + 1u - p.window : 0u;
    load_tile(first, last, base, rs, nc); // in flight while the queries load
    if (t < QB * 8u) { // queries in (already rotated by rope_kv), as float16
        const uint qi = t >> 3, c = t & 7u;
        uvec4 w = uvec4(0u);
        if (qi < nq && c < nc) {
            const uint a = p.qoff + (g * p.rps + q0 + qi) * 3u * p.d + h * p.dh + c * 8u;
            w = uvec4(packFloat2x16(f16vec2(ar[a], ar[a + 1u])),
                      packFloat2x16(f16vec2(ar[a + 2u], ar[a + 3u])),
                      packFloat2x16(f16vec2(ar[a + 4u], ar[a + 5u])),
                      packFloat2x16(f16vec2(ar[a + 6u], ar[a + 7u])));
        }
        qh[qi * HS + c] = w;
    }
    // the softmax's roles (t < 128): query sq, keys 8 kg .. 8 kg + 7 of a tile
    const uint sq = (t >> 3) & 15u, kg = t & 7u;
    const uint pq = pos0 + sq; // its position and its window's first key
    const uint fq = (p.window > 0u && pq + 1u > p.window) ? pq + 1u - p.window : 0u;
    float m = -1e30, l = 0.0; // the query's running maximum (the same in its 8), this share's sum
    // the output's roles: query oq, channels 4 oc .. 4 oc + 3
    const uint oq = t >> 4, oc = t & 15u;
    vec4 o = vec4(0.0);
    for (uint k0 = first; k0 <= last; k0 += KT) {
        [[unroll]] for (uint l2 = 0u; l2 < 2u; l2++) {
            const uint i = t + 256u * l2;
            kh[(i >> 3) * HS + (i & 7u)] = rk[l2];
            vh[(i >> 3) * HS + (i & 7u)] = rv[l2];
        }
        barrier(); // the tile (and the queries) in shared memory
        if (k0 + KT <= last) load_tile(k0 + KT, last, base, rs, nc);
        if (sg < 4u) { // S's keys 16 sg .. 16 sg + 15
            F32M s = F32M(0.0);
            for (uint f = 0u; f < nf; f++) {
                F16M a, b;
                coopMatLoadNV(a, qh, 2u * f, HS, false);
                coopMatLoadNV(b, kh, 16u * sg * HS + 2u * f, HS, true); // K^T
                s = coopMatMulAddNV(a, b, s);
            }
            coopMatStoreNV(s, sf, 4u * sg, FS, false);
        }
        barrier(); // S
        float sv[8];
        float lm = -1e30;
        if (t < 128u) {
            const vec4 a = uintBitsToFloat(sf[sq * FS + 2u * kg]);
            const vec4 b = uintBitsToFloat(sf[sq * FS + 2u * kg + 1u]);
            sv[0] = a.x, sv[1] = a.y, sv[2] = a.z, sv[3] = a.w;
            sv[4] = b.x, sv[5] = b.y, sv[6] = b.z, sv[7] = b.w;
            [[unroll]] for (uint j = 0u; j < 8u; j++) {
                const uint kk = k0 + 8u * kg + j;
                sv[j] = (sq < nq && kk >= fq && kk <= pq) ? sv[j] * p.scale : -1e30;
                lm = max(lm, sv[j]);
            }
            pm[sq][kg] = lm;
        }
        barrier(); // every share's maximum
        if (t < 128u) {
            float mt = m;
            [[unroll]] for (uint j = 0u; j < 8u; j++) mt = max(mt, pm[sq][j]);
            const float c = exp(m - mt);
            m = mt;
            float e[8], es = 0.0;
            [[unroll]] for (uint j = 0u; j < 8u; j++) {
                e[j] = sv[j] > -1e29 ? exp(sv[j] - m) : 0.0;
                es += e[j];
            }
            l = l * c + es;
            ph[sq * HS + kg] = uvec4(packFloat2x16(f16vec2(e[0], e[1])), packFloat2x16(f16vec2(e[2], e[3])),
                                     packFloat2x16(f16vec2(e[4], e[5])), packFloat2x16(f16vec2(e[6], e[7])));
            if (kg == 0u) cs[sq] = c;
        }
        barrier(); // P and the rescales
        if (sg < nf) { // O_t's channels 16 sg .. 16 sg + 15
            F32M ot = F32M(0.0);
            [[unroll]] for (uint f = 0u; f < 4u; f++) {
                F16M a, b;
                coopMatLoadNV(a, ph, 2u * f, HS, false);
                coopMatLoadNV(b, vh, 16u * f * HS + 2u * sg, HS, false);
                ot = coopMatMulAddNV(a, b, ot);
            }
            coopMatStoreNV(ot, sf, 4u * sg, FS, false);
        }
        barrier(); // O_t; the tile, S and P read: the next tile may replace them
        if (4u * oc < p.dh) o = o * cs[oq] + uintBitsToFloat(sf[oq * FS + oc]);
    }
    if (t < 128u) pm[sq][kg] = l;
    barrier();
    if (oq < nq && 4u * oc < p.dh) {
        float ls = 0.0;
        [[unroll]] for (uint j = 0u; j < 8u; j++) ls += pm[oq][j];
        const vec4 r = o / ls;
        const uint a = p.ooff + (g * p.rps + q0 + oq) * p.d + h * p.dh + oc * 4u;
        ar[a] = r.x;
        ar[a + 1u] = r.y;
        ar[a + 2u] = r.z;
        ar[a + 3u] = r.w;
    }
}
