#version 450
#extension GL_GOOGLE_include_directive : require
// attn_group.comp - causal (windowed) attention for groups of consecutive rows of one slot
// (the codec's 16 rows a frame, prompt blocks): one workgroup per (group, block of 16 query
// rows, head). The block's keys and values go through shared memory in tiles of 32, read once
// for the 16 queries (attention.comp reads them once per query row), with an online softmax per
// query spread over its 16 threads (before, one thread a query took every max and exponential
// of a tile while the other 240 waited). Same arithmetic as attention.comp up to summation
// order. Needs dh <= 64, dh % 4 == 0.
#include "common.glsl"
layout(std430, set = 0, binding = 2) readonly buffer KCache4 { vec4 kc4[]; };
layout(std430, set = 0, binding = 3) readonly buffer VCache4 { vec4 vc4[]; };
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
    uint rps, d, dh, list, len, kvbase, kvslot, kvlayer, cap, window, qoff, ooff;
    float scale;
    uint nqb; // query blocks per group: ceil(rps / 16)
} p;
const uint QB = 16u, KT = 32u;
shared vec4 qs[QB][16];  // queries [16][dh <= 64]
shared vec4 ks[KT][16];  // key tile
shared vec4 vs[KT][16];  // value tile
shared float ps[QB][KT]; // scores
shared float pp[QB][KT]; // probabilities
shared float lsum[QB];
void main() {
    uint g = gl_WorkGroupID.x / p.nqb, qb = gl_WorkGroupID.x % p.nqb, h = gl_WorkGroupID.y;
    uint t = gl_LocalInvocationID.x, dh4 = p.dh >> 2;
    uint slot = iv[p.list + g];
    uint q0 = qb * QB, nq = min(QB, p.rps - q0); // rows of this block within the group
    uint pos0 = iv[p.len + slot] + q0;           // position of the block's first row
    uint base = p.kvbase + slot * p.kvslot + p.kvlayer + h * p.dh;
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
    uint last = pos0 + nq - 1u;
    uint first = (p.window > 0u && pos0 + 1u > p.window) ? pos0 + 1u - p.window : 0u;
    // thread roles: query sq = t / 16 with its 15 neighbours (the same query's threads); keys sk
    // and sk + 16 of a tile for the scores and probabilities; channels 4 sk .. + 3 of the values
    uint sq = t >> 4, sk = t & 15u;
    uint pq = pos0 + sq;
    uint fq = (p.window > 0u && pq + 1u > p.window) ? pq + 1u - p.window : 0u;
    // online softmax: each of a query's 16 threads keeps the running max m (the same value in
    // all 16: the max over the same scores) and takes the exponentials of its two keys; the
    // first of them keeps the running sum l, adding the tile's 32 in key order beside its
    // share of the values (the order of a one-thread-per-query softmax: the same bits)
    vec4 o = vec4(0.0);
    float m = -1e30, l = 0.0;
    barrier();
    for (uint k0 = first; k0 <= last; k0 += KT) {
        for (uint i = t; i < KT * 16u; i += 256u) { // the tile's keys and values
            uint kj = i >> 4, c4 = i & 15u, kk = k0 + kj;
            vec4 kv = vec4(0.0), vv = vec4(0.0);
            if (kk <= last && c4 < dh4) {
                uint row = (base + (kk % p.cap) * p.d) >> 2;
                kv = kc4[row + c4];
                vv = vc4[row + c4];
            }
            ks[kj][c4] = kv;
            vs[kj][c4] = vv;
        }
        barrier();
        float s[2];
        for (uint j = 0u; j < 2u; j++) {
            uint kj = sk + 16u * j, kk = k0 + kj;
            s[j] = -1e30;
            if (sq < nq && kk >= fq && kk <= pq) {
                float a = 0.0;
                for (uint c4 = 0u; c4 < dh4; c4++) a += dot(qs[sq][c4], ks[kj][c4]);
                s[j] = a * p.scale;
            }
            ps[sq][kj] = s[j];
        }
        barrier();
        float mn = m;
        for (uint j = 0u; j < KT; j++) mn = max(mn, ps[sq][j]);
        float c = exp(m - mn);
        m = mn;
        for (uint j = 0u; j < 2u; j++) pp[sq][sk + 16u * j] = s[j] > -1e29 ? exp(s[j] - mn) : 0.0;
        barrier();
        if (sk < dh4) {
            o *= c;
            for (uint j = 0u; j < KT; j++) o += pp[sq][j] * vs[j][sk];
        }
        if (sk == 0u) {
            l *= c;
            for (uint j = 0u; j < KT; j++) l += pp[sq][j];
        }
        barrier();
    }
    if (sk == 0u) lsum[sq] = l;
    barrier();
    if (sq < nq && sk < dh4) {
        vec4 r = o / lsum[sq];
        uint a = p.ooff + (g * p.rps + q0 + sq) * p.d + h * p.dh + sk * 4u;
        ar[a] = r.x;
        ar[a + 1u] = r.y;
        ar[a + 2u] = r.z;
        ar[a + 3u] = r.w;
    }
}
