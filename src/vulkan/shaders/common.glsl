// common.glsl - bindings shared by every pipeline (vk.h) and small helpers.
layout(std430, set = 0, binding = 0) readonly buffer Weights { float wt[]; };
layout(std430, set = 0, binding = 1) buffer Arena { float ar[]; };
layout(std430, set = 0, binding = 2) buffer KCache { float kc[]; };
layout(std430, set = 0, binding = 3) buffer VCache { float vc[]; };
layout(std430, set = 0, binding = 4) buffer Ints { uint iv[]; };
layout(std430, set = 0, binding = 5) buffer Io { float io[]; };

#include "funcs.glsl"
