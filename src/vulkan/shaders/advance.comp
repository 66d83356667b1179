#version 450
#extension GL_GOOGLE_include_directive : require
// advance.comp - positions of the listed slots move on: iv[len + iv[list + g]] += inc.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform P { uint groups, list, len, inc; } p;
void main() {
    uint g = flat_id();
    if (g < p.groups) iv[p.len + iv[p.list + g]] += p.inc;
}
