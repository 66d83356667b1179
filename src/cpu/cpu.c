/* cpu.c - choosing the kernel table at run time: CPUID, capped by the PTTS_ISA variable. */
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

int ptts_kernels_all(const ptts_kernels **out, int max) {
    int n = 0;
    if (n < max) out[n++] = ptts_kernels_ref();
    return n;
}

const ptts_kernels *ptts_kernels_best(void) {
    const ptts_kernels *all[8];
    int n = ptts_kernels_all(all, 8);
    const char *cap = getenv("PTTS_ISA");
    if (cap && *cap) {
        for (int i = 0; i < n; i++)
            if (strcmp(all[i]->isa, cap) == 0) return all[i];
    }
    return all[n - 1];
}
