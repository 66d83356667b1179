// gemm_direct.glsl - the tensor-core gemms' direct epilogue (gemm_tc.glsl, gemm_tch.glsl,
// included after gemm_out.glsl and F32M): a subgroup's 16 x 16 float32 accumulator fragments
// go from registers straight into Y's rows (coopMatStoreNV with Y's row stride), instead of
// through a float32 patch in shared memory that the lanes read back 16 bytes at a time. Same
// operations in the same order as the patch path (sum + bias, activation, alpha, + Y), so the
// same outputs bit for bit. 1,024 streams: on an H200 the 491,520 x 256 x 256 conv 1100 ->
// 1031 us, gemm_tch_t / _q 9-11% less, the engine +3% paired; on an H100 the codec 13.2 ->
// 12.5 ms a frame, the engine +5% paired (bench/RESULTS.md, "Where the big conv's time goes;
// the direct epilogue").
// An element of one fragment type is the same (row, output) in every fragment of that type,
// so element-wise sums of two fragments are a loop over the lane's elements (the + operator
// on fragments made Debian's glslc -O crash here).

// Whether a subgroup's nr rows from rs (16-row blocks) and nc outputs from ms store directly:
// inside N and M, each 16-row block in one row group (rows yld floats apart), no gate (the
// patch path reads gate rows), Y's offsets and stride multiples of 4 floats (16-byte rows).
bool direct_ok(uint rs, uint nr, uint ms, uint nc) {
    if (p.goff != NONE || ((p.yoff | p.ygs | p.yld) & 3u) != 0u || rs + nr > p.N || ms + nc > p.M)
        return false;
    bool ok = true;
    for (uint r = rs; r < rs + nr; r += 16u) ok = ok && r / p.yrps == (r + 15u) / p.yrps;
    return ok;
}

// One fragment v of sums for the 16 rows from the one at ya (the first row's offset in the
// arena) and the 16 outputs from m: bias (a row loaded with stride 0, every row the same;
// zeros without, as the patch path adds its zero bias), activation, alpha, + Y, stored.
void store_direct(F32M v, uint ya, uint m) {
    F32M b = F32M(0.0);
    if (p.boff != NONE) coopMatLoadNV(b, wt, p.boff + m, 0u, false);
    for (int k = 0; k < v.length(); k++) v[k] = act_(p.act, v[k] + b[k]) * p.alpha;
    if (p.accum != 0u) {
        F32M o;
        coopMatLoadNV(o, ar, ya + m, p.yld, false);
        for (int k = 0; k < v.length(); k++) v[k] += o[k];
    }
    coopMatStoreNV(v, ar, ya + m, p.yld, false);
}
