/* avx512_ref.c (tests/amx_emu) - the avx512 table of the model build: the reference's kernels
 * under the name "avx512" (the amx table is built on it and passes it the shapes its tiles do
 * not take; kernels_avx512.c itself needs the real instructions). */
#include "cpu/kernels.h"

const ptts_kernels *ptts_kernels_avx512(void);

const ptts_kernels *ptts_kernels_avx512(void) {
    static ptts_kernels k;
    static int done;
    if (!done) { /* the model's tests call it from one thread first (cpu.c, the table's init) */
        k = *ptts_kernels_ref();
        k.isa = "avx512";
        done = 1;
    }
    return &k;
}
