#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require
// attn_dec.comp - attention.comp's causal (windowed) attention of one query row per workgroup
// and head over float16 caches with 16-byte rows (kv.glsl), for heads of 8 to 64 channels (a
// power of two: the models' 64, the tiny test model's 16): the batched steps' attention.
// attention.comp scores a tile of 256 keys one invocation a key, takes the tile's maximum and
// sum through shared-memory trees and then sums the values: about 20 barriers and five
// dependent trips to memory for 250 keys (at 1,024 streams on the H200 15% of the GPU's time,
// 487 us a dispatch, well below the memory's rate: bench/RESULTS.md). Here
// (flash-decoding's form) GS = dh / 8 invocations share a key: invocation j of a group holds the
// query's channels 8j .. 8j + 7 and loads the same channels of the key and of the value (one
// 16-byte load each; the group's loads are the head's row), the key's score is the sum of the
// group's partial dot products (log2 GS shuffles within the group), and each of the NG = WGS / GS
// groups keeps its own online softmax (maximum, sum, 8 channels of output) over keys g, g + NG,
// ..., U keys at a time with all their key and value loads issued together. No barrier until
// the end, where the groups' partial results are merged through shared memory. Same arithmetic
// as attention.comp up to summation order (test_vulkan_hooks compares both with the CPU).
// Off by default until a GPU measures it (vk_engine.h: vk_tune.attn_dec).
// Needs subgroups of a power of two >= 8 invocations with shuffles (vk.c: pvk_ctx.shuffle8),
// p.kvh, p.v4 and dh a power of two in 8 .. 64 (vk_record.c).
#include "common.glsl"
#define KV_NO_DOT
#include "kv.glsl"
#define WGS 128
#define U 4 // keys a group has in flight
layout(local_size_x = WGS) in;
layout(push_constant) uniform P {
    uint rps, d, dh, list, len, kvbase, kvslot, kvlayer, cap, window, qoff, ooff;
    float scale;
    uint v4, kvh;
} p;
shared float smx[WGS], ssum[WGS]; // [group]: NG <= WGS
shared vec4 sout[2 * WGS];        // [group][dh / 4]: NG dh / 4 = 2 WGS vec4s

void main() {
    const uint r = gl_WorkGroupID.x, h = gl_WorkGroupID.y, t = gl_LocalInvocationID.x;
    const uint slot = iv[p.list + r / p.rps];
    const uint pos = iv[p.len + slot] + r % p.rps;
    const uint first = (p.window > 0u && pos + 1u > p.window) ? pos + 1u - p.window : 0u;
    const uint nk = pos - first + 1u;
    // a group is GS consecutive invocations of a subgroup (GS <= 8 divides the subgroup's
    // size): j its block of 8 channels, g its keys
    const uint GS = p.dh >> 3, NG = WGS / GS, dh4 = p.dh >> 2;
    const uint sl = gl_SubgroupInvocationID, j = sl & (GS - 1u);
    const uint g = (gl_SubgroupID * gl_SubgroupSize + sl) / GS;
    const uint qb = p.qoff + r * 3u * p.d + h * p.dh + 8u * j;
    const vec4 q0 = vec4(ar[qb], ar[qb + 1u], ar[qb + 2u], ar[qb + 3u]);
    const vec4 q1 = vec4(ar[qb + 4u], ar[qb + 5u], ar[qb + 6u], ar[qb + 7u]);
    // uvec4s: a cache row is d / 8 of them, the head's from h dh / 8
    const uint rs4 = p.d >> 3;
    const uint base4 = ((p.kvbase + slot * p.kvslot + p.kvlayer) >> 2) + h * GS + j;
    float mx = -1e30, sum = 0.0;
    vec4 o0 = vec4(0.0), o1 = vec4(0.0);
    // every invocation runs every pass (a group's shuffles need all of it); loads past nk skipped
    for (uint k0 = 0u; k0 < nk; k0 += NG * U) {
        uvec4 kw[U], vw[U];
        [[unroll]] for (uint u = 0u; u < U; u++) {
            const uint kk = k0 + u * NG + g;
            const uint a = base4 + ((first + kk) % p.cap) * rs4;
            kw[u] = kk < nk ? ku4[a] : uvec4(0u);
            vw[u] = kk < nk ? vu4[a] : uvec4(0u);
        }
        float s[U];
        float tm = mx;
        [[unroll]] for (uint u = 0u; u < U; u++) {
            float x = dot(q0, kv_h4(kw[u].xy)) + dot(q1, kv_h4(kw[u].zw));
            for (uint w = 1u; w < GS; w <<= 1) x += subgroupShuffleXor(x, w);
            s[u] = x * p.scale;
            if (k0 + u * NG + g < nk) tm = max(tm, s[u]);
        }
        const float corr = exp(mx - tm);
        sum *= corr;
        o0 *= corr;
        o1 *= corr;
        [[unroll]] for (uint u = 0u; u < U; u++) {
            const float e = k0 + u * NG + g < nk ? exp(s[u] - tm) : 0.0;
            sum += e;
            o0 += e * kv_h4(vw[u].xy);
            o1 += e * kv_h4(vw[u].zw);
        }
        mx = tm;
    }
    // merge the groups: a group without keys has mx -1e30, sum 0, o 0 (weight exp(-1e30 - m) = 0)
    if (j == 0u) {
        smx[g] = mx;
        ssum[g] = sum;
    }
    sout[g * dh4 + 2u * j] = o0;
    sout[g * dh4 + 2u * j + 1u] = o1;
    barrier();
    if (t < dh4) { // channels 4t .. 4t + 3
        float m = smx[0];
        for (uint i = 1u; i < NG; i++) m = max(m, smx[i]);
        float l = 0.0;
        vec4 o = vec4(0.0);
        for (uint i = 0u; i < NG; i++) {
            const float w = exp(smx[i] - m);
            l += ssum[i] * w;
            o += sout[i * dh4 + t] * w;
        }
        o /= l;
        const uint ob = p.ooff + r * p.d + h * p.dh + 4u * t;
        ar[ob] = o.x;
        ar[ob + 1u] = o.y;
        ar[ob + 2u] = o.z;
        ar[ob + 3u] = o.w;
    }
}
