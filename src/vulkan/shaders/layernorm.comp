#version 450
#extension GL_GOOGLE_include_directive : require
// layernorm.comp - one workgroup per row: y = LN(x; eps) [* w + b] [* (1 + scale) + shift],
// shift = mod[r * mld + c], scale = mod[r * mld + d + c] (the flow head's modulation).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
    uint d, xoff, xld, yoff, yld, woff, boff, moff, mld;
    float eps;
} p;
shared float red[256];
float block_sum(float v) {
    uint t = gl_LocalInvocationID.x;
    red[t] = v;
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1) {
        if (t < s) red[t] += red[t + s];
        barrier();
    }
    float r = red[0];
    barrier();
    return r;
}
void main() {
    uint r = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x, t = gl_LocalInvocationID.x;
    uint xb = p.xoff + r * p.xld, yb = p.yoff + r * p.yld;
    float s = 0.0;
    for (uint c = t; c < p.d; c += 256u) s += ar[xb + c];
    float mean = block_sum(s) / float(p.d);
    float v = 0.0;
    for (uint c = t; c < p.d; c += 256u) {
        float q = ar[xb + c] - mean;
        v += q * q;
    }
    float inv = 1.0 / sqrt(block_sum(v) / float(p.d) + p.eps);
    for (uint c = t; c < p.d; c += 256u) {
        float y = (ar[xb + c] - mean) * inv;
        if (p.woff != NONE) y = y * wt[p.woff + c];
        if (p.boff != NONE) y = y + wt[p.boff + c];
        if (p.moff != NONE) {
            uint mb = p.moff + r * p.mld;
            y = y * (1.0 + ar[mb + p.d + c]) + ar[mb + c];
        }
        ar[yb + c] = y;
    }
}
