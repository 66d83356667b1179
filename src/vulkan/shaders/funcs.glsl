// funcs.glsl - constants and scalar helpers shared by every shader (no bindings: stepk.comp
// declares its own, coherent ones).
const uint NONE = 0xffffffffu;

// erf with |relative error| < 1.2e-7 (Numerical Recipes erfc, Chebyshev fit)
float erf_(float x) {
    float z = abs(x);
    float t = 1.0 / (1.0 + 0.5 * z);
    float r = t * exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
              t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
              t * (-0.82215223 + t * 0.17087277)))))))));
    return x >= 0.0 ? 1.0 - r : r - 1.0;
}
float gelu_(float x) { return 0.5 * x * (1.0 + erf_(x * 0.70710678118654752)); }
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
