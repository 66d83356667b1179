#version 450
#extension GL_GOOGLE_include_directive : require
// attn_group.comp - causal (windowed) attention for groups of consecutive rows of one slot
// (the codec's 16 rows a frame, prompt blocks): one workgroup per (group, block of 16 query
// rows, head). The block's keys and values go through shared memory in tiles of 32, read once
// for the 16 queries (attention.comp reads them once per query row), with an online softmax per
// query. Same arithmetic as attention.comp up to summation order. Needs dh <= 64, dh % 4 == 0
// and cache rows of 16 bytes (float32) or 8 (float16 pairs, p.kvh: kv.glsl).
#include "common.glsl"
#define KV_NO_DOT // kv_key4 / kv_val4 only
#include "kv.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
    uint rps, d, dh, list, len, kvbase, kvslot, kvlayer, cap, window, qoff, ooff;
    float scale;
    uint nqb; // query blocks per group: ceil(rps / 16)
    uint kvh;
} p;
const uint QB = 16u, KT = 32u;
shared vec4 qs[QB][16];  // queries [16][dh <= 64]
shared vec4 ks[KT][16];  // key tile
shared vec4 vs[KT][16];  // value tile
shared float ps[QB][KT]; // scores -> probabilities
shared float mx[QB], lsum[QB];
void main() {
    uint g = gl_WorkGroupID.x / p.nqb, qb = gl_WorkGroupID.x % p.nqb, h = gl_WorkGroupID.y;
    uint t = gl_LocalInvocationID.x, dh4 = p.dh >> 2;
    uint slot = iv[p.list + g];
    uint q0 = qb * QB, nq = min(QB, p.rps - q0); // rows of this block within the group
    uint pos0 = iv[p.len + slot] + q0;           // position of the block's first row
    bool hf = p.kvh != 0u;
    uint rs = kv_words(p.d, hf); // words a cache row
    uint base = p.kvbase + slot * p.kvslot + p.kvlayer + h * kv_words(p.dh, hf);
    // queries in (already rotated by rope_kv)
    for (uint i = t; i < QB * 16u; i += 256u) {
        uint qi = i >> 4, c4 = i & 15u;
        vec4 v = vec4(0.0);
        if (qi < nq && c4 < dh4) {
            uint a = p.qoff + (g * p.rps + q0 + qi) * 3u * p.d + h * p.dh + c4 * 4u;
            v = vec4(ar[a], ar[a + 1u], ar[a + 2u], ar[a + 3u]);
        }
        qs[qi][c4] = v;
    }
    if (t < QB) {
        mx[t] = -1e30;
        lsum[t] = 0.0;
    }
    uint last = pos0 + nq - 1u;
    uint first = (p.window > 0u && pos0 + 1u > p.window) ? pos0 + 1u - p.window : 0u;
    // thread roles: scores (query t / 16, keys t % 16 and t % 16 + 16); values (query t / 16,
    // channels 4 (t % 16) .. + 3)
    uint sq = t >> 4, sk = t & 15u;
    vec4 o = vec4(0.0);
    barrier();
    for (uint k0 = first; k0 <= last; k0 += KT) {
        for (uint i = t; i < KT * 16u; i += 256u) { // the tile's keys and values
            uint kj = i >> 4, c4 = i & 15u, kk = k0 + kj;
            vec4 kv = vec4(0.0), vv = vec4(0.0);
            if (kk <= last && c4 < dh4) {
                uint row = base + (kk % p.cap) * rs;
                kv = kv_key4(row, c4, hf);
                vv = kv_val4(row, c4, hf);
            }
            ks[kj][c4] = kv;
            vs[kj][c4] = vv;
        }
        barrier();
        uint pq = pos0 + sq;
        uint fq = (p.window > 0u && pq + 1u > p.window) ? pq + 1u - p.window : 0u;
        for (uint j = 0u; j < 2u; j++) {
            uint kj = sk + 16u * j, kk = k0 + kj;
            float s = -1e30;
            if (sq < nq && kk >= fq && kk <= pq) {
                s = 0.0;
                for (uint c4 = 0u; c4 < dh4; c4++) s += dot(qs[sq][c4], ks[kj][c4]);
                s *= p.scale;
            }
            ps[sq][kj] = s;
        }
        barrier();
        // per query, all 16 of its invocations: the tile's max (each reads the query's row), the
        // rescale, and each its two keys' probabilities. One invocation a query used to
        // exponentiate all 32 in a row while the other 240 waited at the barrier.
        float m = mx[sq];
        for (uint j = 0u; j < KT; j++) m = max(m, ps[sq][j]);
        float c = exp(mx[sq] - m);
        float s0 = ps[sq][sk], s1 = ps[sq][sk + 16u];
        float e0 = s0 > -1e29 ? exp(s0 - m) : 0.0, e1 = s1 > -1e29 ? exp(s1 - m) : 0.0;
        barrier(); // every read of the scores and of mx done
        ps[sq][sk] = e0;
        ps[sq][sk + 16u] = e1;
        if (sk == 0u) mx[sq] = m;
        barrier();
        if (sk == 0u) { // the sum in key order, as before
            float l = lsum[sq] * c;
            for (uint j = 0u; j < KT; j++) l += ps[sq][j];
            lsum[sq] = l;
        }
        if (sk < dh4) {
            o *= c;
            for (uint j = 0u; j < KT; j++) o += ps[sq][j] * vs[j][sk];
        }
        barrier();
    }
    if (sq < nq && sk < dh4) {
        vec4 r = o / lsum[sq];
        uint a = p.ooff + (g * p.rps + q0 + sq) * p.d + h * p.dh + sk * 4u;
        ar[a] = r.x;
        ar[a + 1u] = r.y;
        ar[a + 2u] = r.z;
        ar[a + 3u] = r.w;
    }
}
