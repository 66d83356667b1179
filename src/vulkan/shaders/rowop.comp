#version 450
#extension GL_GOOGLE_include_directive : require
// rowop.comp - element-wise row operations between buffers (0 arena, 1 weights, 2 io) with
// grouped addressing: row r -> off + G(r / rps) * gs + (r % rps) * ld, where G(g) is g, or
// iv[list + g] when the side is slot-indexed (slot state, token ids, caller order).
// ops: 0 copy, 1 elu, 2 add (dst += src), 3 silu(src + arena[v1 + c]),
//      4 src * weights[v1 + c] + weights[v2 + c]
#include "common.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
    uint rows, width, op, list;
    uint sbuf, soff, srps, sgs, sld, sslot;
    uint dbuf, doff, drps, dgs, dld, dslot;
    uint v1, v2;
} p;
uint addr(uint off, uint rps, uint gs, uint ld, uint slot, uint r) {
    uint g = r / rps;
    if (slot != 0u) g = iv[p.list + g];
    return off + g * gs + (r % rps) * ld;
}
void main() {
    uint i = flat_id();
    if (i >= p.rows * p.width) return;
    uint r = i / p.width, c = i % p.width;
    uint sa = addr(p.soff, p.srps, p.sgs, p.sld, p.sslot, r) + c;
    uint da = addr(p.doff, p.drps, p.dgs, p.dld, p.dslot, r) + c;
    float x = p.sbuf == 0u ? ar[sa] : (p.sbuf == 1u ? wt[sa] : io[sa]);
    float y;
    if (p.op == 1u) y = elu_(x);
    else if (p.op == 3u) y = silu_(x + ar[p.v1 + c]);
    else if (p.op == 4u) y = x * wt[p.v1 + c] + wt[p.v2 + c];
    else y = x;
    if (p.dbuf == 2u) {
        io[da] = p.op == 2u ? io[da] + y : y;
    } else {
        ar[da] = p.op == 2u ? ar[da] + y : y;
    }
}
