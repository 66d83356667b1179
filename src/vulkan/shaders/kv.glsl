// kv.glsl - a row of the attention caches (bindings 2 and 3: keys, values) in one of two
// formats, for rope_kv.comp, attention.comp, attn_dec.comp, attn_group.comp, attn_tc.comp and
// stepk.glsl:
//   float32: d words a row, channel c at word c (kc, vc: declared by common.glsl / stepk.glsl);
//   float16 (h): d / 2 words a row, word j = channels 2j (low half) and 2j + 1 (high half),
//     packHalf2x16's rounding: half the bytes and half the memory (vk_engine.h: vk_kv).
// Offsets are in words either way. A head's channels start at word h * kv_words(dh, h).
// The attention kernels read a key per invocation and are bound by the latency of those loads
// more than by their bytes: float16 rows pay only with fewer round trips (a 64-channel key's
// eight 16-byte loads at once; values two channels a lane, eight keys in flight). With the
// float32 loops on float16 rows (four loads in flight, a value channel a lane) the engine was
// 3% slower at 256-1,024 streams than with float32 rows (bench/RESULTS.md).
// The includer declares `shared vec4 qs4[64]` (the query, dh <= 256 channels) and `shared
// float sc[]` (a tile's probabilities) first, or defines KV_NO_DOT.
layout(std430, set = 0, binding = 2) readonly buffer KCache4 { vec4 kc4[]; };
layout(std430, set = 0, binding = 2) buffer KCacheU { uint ku[]; };
layout(std430, set = 0, binding = 2) readonly buffer KCacheU2 { uvec2 ku2[]; };
layout(std430, set = 0, binding = 2) readonly buffer KCacheU4 { uvec4 ku4[]; };
layout(std430, set = 0, binding = 3) readonly buffer VCache4 { vec4 vc4[]; };
layout(std430, set = 0, binding = 3) buffer VCacheU { uint vu[]; };
layout(std430, set = 0, binding = 3) readonly buffer VCacheU2 { uvec2 vu2[]; };
layout(std430, set = 0, binding = 3) readonly buffer VCacheU4 { uvec4 vu4[]; };

// words of n channels
uint kv_words(uint n, bool h) { return h ? n >> 1 : n; }

// channels 2j and 2j + 1 of the key and the value at word `row`
void kv_put(uint row, uint j, vec2 k, vec2 v, bool h) {
    if (h) {
        ku[row + j] = packHalf2x16(k);
        vu[row + j] = packHalf2x16(v);
    } else {
        kc[row + 2u * j] = k.x;
        kc[row + 2u * j + 1u] = k.y;
        vc[row + 2u * j] = v.x;
        vc[row + 2u * j + 1u] = v.y;
    }
}

vec4 kv_h4(uvec2 w) { return vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y)); }

#ifndef KV_NO_DOT
// qs4 . the key of dh channels at word `row`; v4: 16-byte loads (row a multiple of 4 words,
// dh of 4 channels, of 8 when h), four in flight
float kv_dot(uint row, uint dh, bool v4, bool h) {
    float s = 0.0;
    if (v4 && h && dh == 64u) { // the models' head: the row's eight loads in flight at once
        uint r4 = row >> 2;
        uvec4 k0 = ku4[r4], k1 = ku4[r4 + 1u], k2 = ku4[r4 + 2u], k3 = ku4[r4 + 3u];
        uvec4 k4 = ku4[r4 + 4u], k5 = ku4[r4 + 5u], k6 = ku4[r4 + 6u], k7 = ku4[r4 + 7u];
        float s1 = dot(qs4[1], kv_h4(k0.zw)), s2 = dot(qs4[2], kv_h4(k1.xy));
        float s3 = dot(qs4[3], kv_h4(k1.zw));
        s = dot(qs4[0], kv_h4(k0.xy));
        s += dot(qs4[4], kv_h4(k2.xy)), s1 += dot(qs4[5], kv_h4(k2.zw));
        s2 += dot(qs4[6], kv_h4(k3.xy)), s3 += dot(qs4[7], kv_h4(k3.zw));
        s += dot(qs4[8], kv_h4(k4.xy)), s1 += dot(qs4[9], kv_h4(k4.zw));
        s2 += dot(qs4[10], kv_h4(k5.xy)), s3 += dot(qs4[11], kv_h4(k5.zw));
        s += dot(qs4[12], kv_h4(k6.xy)), s1 += dot(qs4[13], kv_h4(k6.zw));
        s2 += dot(qs4[14], kv_h4(k7.xy)), s3 += dot(qs4[15], kv_h4(k7.zw));
        s += (s1 + s2) + s3;
    } else if (v4 && h) {
        uint row4 = row >> 2, i = 0u, dh8 = dh >> 3;
        float s1 = 0.0, s2 = 0.0, s3 = 0.0;
        for (; i + 1u < dh8; i += 2u) {
            uvec4 k0 = ku4[row4 + i], k1 = ku4[row4 + i + 1u];
            s += dot(qs4[2u * i], kv_h4(k0.xy));
            s1 += dot(qs4[2u * i + 1u], kv_h4(k0.zw));
            s2 += dot(qs4[2u * i + 2u], kv_h4(k1.xy));
            s3 += dot(qs4[2u * i + 3u], kv_h4(k1.zw));
        }
        for (; i < dh8; i++) {
            uvec4 k0 = ku4[row4 + i];
            s += dot(qs4[2u * i], kv_h4(k0.xy));
            s1 += dot(qs4[2u * i + 1u], kv_h4(k0.zw));
        }
        s += (s1 + s2) + s3;
    } else if (h) {
        for (uint i = 0u; i < dh; i += 2u) {
            vec2 k = unpackHalf2x16(ku[row + (i >> 1)]);
            s += qs4[i >> 2][i & 3u] * k.x + qs4[i >> 2][(i & 3u) + 1u] * k.y;
        }
    } else if (v4) {
        uint row4 = row >> 2, i = 0u, dh4 = dh >> 2;
        float s1 = 0.0, s2 = 0.0, s3 = 0.0;
        for (; i + 3u < dh4; i += 4u) {
            vec4 k0 = kc4[row4 + i], k1 = kc4[row4 + i + 1u], k2 = kc4[row4 + i + 2u],
                 k3 = kc4[row4 + i + 3u];
            s += dot(qs4[i], k0);
            s1 += dot(qs4[i + 1u], k1);
            s2 += dot(qs4[i + 2u], k2);
            s3 += dot(qs4[i + 3u], k3);
        }
        for (; i < dh4; i++) s += dot(qs4[i], kc4[row4 + i]);
        s += (s1 + s2) + s3;
    } else {
        for (uint i = 0u; i < dh; i++) s += qs4[i >> 2][i & 3u] * kc[row + i];
    }
    return s;
}

// float32 values: o plus the sum over the keys i = i0, i0 + ng, ... < cnt of a tile (sc[i]:
// their probabilities, the includer's shared array) of channel c of the value at word
// base + ((q0 + i) % cap) rs: four loads in flight
float kv_vsum_f(float o, uint base, uint rs, uint q0, uint cap, uint i0, uint ng, uint c,
                uint cnt) {
    uint i = i0;
    float o1 = 0.0, o2 = 0.0, o3 = 0.0;
    for (; i + 3u * ng < cnt; i += 4u * ng) {
        uint a = q0 + i;
        float v0 = vc[base + (a % cap) * rs + c];
        float v1 = vc[base + ((a + ng) % cap) * rs + c];
        float v2 = vc[base + ((a + 2u * ng) % cap) * rs + c];
        float v3 = vc[base + ((a + 3u * ng) % cap) * rs + c];
        o += sc[i] * v0;
        o1 += sc[i + ng] * v1;
        o2 += sc[i + 2u * ng] * v2;
        o3 += sc[i + 3u * ng] * v3;
    }
    for (; i < cnt; i += ng) o += sc[i] * vc[base + ((q0 + i) % cap) * rs + c];
    return o + ((o1 + o2) + o3);
}

// float16 values: the sum over the keys i = i0, i0 + ng, ... < cnt of a tile (sc[i]: their
// probabilities, the includer's shared array) of channels 2c and 2c + 1 of the value at word
// base + ((q0 + i) % cap) rs: one word a load, eight in flight
vec2 kv_vsum_h(uint base, uint rs, uint q0, uint cap, uint i0, uint ng, uint c, uint cnt) {
    vec2 o0 = vec2(0.0), o1 = vec2(0.0), o2 = vec2(0.0), o3 = vec2(0.0);
    uint i = i0;
    for (; i + 7u * ng < cnt; i += 8u * ng) {
        uint a = q0 + i;
        uint w0 = vu[base + (a % cap) * rs + c], w1 = vu[base + ((a + ng) % cap) * rs + c];
        uint w2 = vu[base + ((a + 2u * ng) % cap) * rs + c];
        uint w3 = vu[base + ((a + 3u * ng) % cap) * rs + c];
        uint w4 = vu[base + ((a + 4u * ng) % cap) * rs + c];
        uint w5 = vu[base + ((a + 5u * ng) % cap) * rs + c];
        uint w6 = vu[base + ((a + 6u * ng) % cap) * rs + c];
        uint w7 = vu[base + ((a + 7u * ng) % cap) * rs + c];
        o0 += sc[i] * unpackHalf2x16(w0) + sc[i + 4u * ng] * unpackHalf2x16(w4);
        o1 += sc[i + ng] * unpackHalf2x16(w1) + sc[i + 5u * ng] * unpackHalf2x16(w5);
        o2 += sc[i + 2u * ng] * unpackHalf2x16(w2) + sc[i + 6u * ng] * unpackHalf2x16(w6);
        o3 += sc[i + 3u * ng] * unpackHalf2x16(w3) + sc[i + 7u * ng] * unpackHalf2x16(w7);
    }
    for (; i < cnt; i += ng) o0 += sc[i] * unpackHalf2x16(vu[base + ((q0 + i) % cap) * rs + c]);
    return (o0 + o1) + (o2 + o3);
}
#endif

// channels 4 c4 .. 4 c4 + 3 of the key / value at word `row` (row a multiple of 4 words; of 2
// when h)
vec4 kv_key4(uint row, uint c4, bool h) {
    return h ? kv_h4(ku2[(row >> 1) + c4]) : kc4[(row >> 2) + c4];
}
vec4 kv_val4(uint row, uint c4, bool h) {
    return h ? kv_h4(vu2[(row >> 1) + c4]) : vc4[(row >> 2) + c4];
}
