// funcs.glsl - constants and scalar helpers shared by every shader (no bindings: stepk.comp
// declares its own, coherent ones).
const uint NONE = 0xffffffffu;

// tanh GELU (MODEL.md section 3) as x / (1 + exp(-2u)): no cancellation of 1 + tanh u for
// negative x, and exp saturates to x or -0 for large |x|
float gelu_(float x) {
    float u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
    return x / (1.0 + exp(-2.0 * u));
}
float silu_(float x) { return x / (1.0 + exp(-x)); }
float elu_(float x) {
    if (x > 0.0) return x;
    if (x > -0.01) return x * (1.0 + x * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0))));
    return exp(x) - 1.0;
}
// activation codes: 0 none, 1 gelu, 2 silu, 3 elu
float act_(uint a, float x) {
    if (a == 1u) return gelu_(x);
    if (a == 2u) return silu_(x);
    if (a == 3u) return elu_(x);
    return x;
}
// 256-wide shaders dispatched as a 2-D grid (pvk_dispatch_flat): the flat invocation index
uint flat_id() {
    return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u +
           gl_LocalInvocationID.x;
}
