/*
 * cpu.c - choosing the kernel table at run time.
 *
 * Variants are listed from the most portable to the fastest: ref < avx2 < avx512 < amx on
 * x86-64, ref < neon on aarch64. A variant is listed only when the build has it and the CPU and
 * the OS support every instruction set its file is compiled with:
 *   avx2:   AVX2, FMA, F16C (CPUID) and OS-saved YMM state (XGETBV XCR0 bits 1-2);
 *   avx512: the above plus AVX-512 F/BW/VL/DQ/BF16/VNNI and OS-saved ZMM/opmask state (XCR0
 *           bits 5-7). BF16 and VNNI are required because kernels_avx512.c is compiled with
 *           them (CMakeLists.txt) and the compiler may emit them anywhere in that file; CPUs
 *           without them (Skylake-X, Ice Lake) get the avx2 table;
 *   amx:    the above plus AMX-TILE/BF16/INT8 (CPUID 7.0 EDX bits 24, 22, 25), OS-saved tile
 *           state (XCR0 bits 17-18) and, on Linux, the kernel's grant of tile data to this
 *           process (arch_prctl ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA = 18, Linux 5.16+;
 *           without it the first tile instruction faults). The request is made once per
 *           process (pthread_once; the grant covers every thread); a refusal (older kernel,
 *           seccomp, another OS) leaves the table unlisted, and avx512 is the best.
 * CPUID is read directly (cpuid.h + xgetbv) rather than through __builtin_cpu_supports so that
 * the OS check is explicit and no compiler-version feature list matters.
 *
 * PTTS_ISA caps the choice: "ref", "avx2", "avx512", "amx" or "neon" picks the best listed
 * variant that is not above the named one in the order above (so PTTS_ISA=avx512 on an
 * AVX2-only CPU gives avx2, and on an AMX CPU the avx512 table). An unset, empty or unknown value
 * means no cap (the best variant); an unknown value is reported once as a warning through ptts_log
 * (the application's log callback), since a typo silently running another kernel table would be
 * confusing.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../common.h"
#include "kernels.h"

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#define PTTS_CPU_X86 1
#include <cpuid.h>
#ifdef __linux__
#include <sys/syscall.h>
#include <unistd.h>
#endif
#endif

const ptts_kernels *ptts_kernels_avx2(void);   /* kernels_avx2.c */
const ptts_kernels *ptts_kernels_avx512(void); /* kernels_avx512.c */
const ptts_kernels *ptts_kernels_amx(void);    /* kernels_amx.c */
const ptts_kernels *ptts_kernels_neon(void);   /* kernels_neon.c */

/* The order of ISA names from the most portable to the fastest. */
static const char *const isa_rank[] = {"ref", "avx2", "avx512", "amx", "neon"};

static int rank_of(const char *isa) {
    for (int i = 0; i < (int)(sizeof isa_rank / sizeof isa_rank[0]); i++)
        if (strcmp(isa_rank[i], isa) == 0) return i;
    return -1;
}

#ifdef PTTS_CPU_X86
static unsigned long long xcr0(void) {
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}

/* Linux's permission for tile data (the AMX tiles' 8 KiB of XSAVE state), asked once. */
#define ARCH_GET_XCOMP_PERM 0x1022
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

static int amx_granted;
static pthread_once_t amx_once = PTHREAD_ONCE_INIT;

static void amx_request(void) {
#if defined(__linux__) && defined(SYS_arch_prctl)
    unsigned long perm = 0;
    if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) != 0) return;
    if (syscall(SYS_arch_prctl, ARCH_GET_XCOMP_PERM, &perm) != 0) return;
    amx_granted = (perm >> XFEATURE_XTILEDATA) & 1;
#endif
}

/* bit 0: avx2 table usable, bit 1: avx512 table usable, bit 2: amx table usable */
static int x86_features(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    int fma = (c >> 12) & 1, osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, f16c = (c >> 29) & 1;
    if (!(osxsave && avx && fma && f16c)) return 0;
    unsigned long long x = xcr0();
    if ((x & 0x6) != 0x6) return 0; /* XMM and YMM state saved by the OS */
    if (__get_cpuid_max(0, NULL) < 7) return 0;
    __cpuid_count(7, 0, a, b, c, d);
    int avx2 = (b >> 5) & 1;
    if (!avx2) return 0;
    int f = (b >> 16) & 1, dq = (b >> 17) & 1, bw = (b >> 30) & 1, vl = (b >> 31) & 1;
    int vnni = (c >> 11) & 1;
    unsigned a1, b1, c1, d1;
    __cpuid_count(7, 1, a1, b1, c1, d1);
    int bf16 = (a1 >> 5) & 1;
    (void)b1, (void)c1, (void)d1;
    int zmm_os = (x & 0xE6) == 0xE6; /* opmask, ZMM0-15 upper halves, ZMM16-31 */
    int avx512 = f && dq && bw && vl && vnni && bf16 && zmm_os;
    int amx_bf16 = (d >> 22) & 1, amx_tile = (d >> 24) & 1, amx_int8 = (d >> 25) & 1;
    int tile_os = (x & 0x60000) == 0x60000; /* XTILECFG and XTILEDATA */
    int amx = 0;
    if (avx512 && amx_tile && amx_bf16 && amx_int8 && tile_os) {
        pthread_once(&amx_once, amx_request);
        amx = amx_granted;
    }
    return 1 | (avx512 << 1) | (amx << 2);
}
#endif

static int pf_kind;
static pthread_once_t pf_once = PTHREAD_ONCE_INIT;

static void pf_detect(void) {
#ifdef PTTS_CPU_X86
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d)) return;
    /* the vendor string in EBX, EDX, ECX */
    if (b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u) /* AuthenticAMD */
        pf_kind = PTTS_PF_STREAM;
    else if (b == 0x756e6547u && d == 0x49656e69u && c == 0x6c65746eu) /* GenuineIntel */
        pf_kind = PTTS_PF_STREAM | PTTS_PF_PANEL;
#endif
}

int ptts_cpu_prefetch(void) {
    pthread_once(&pf_once, pf_detect);
    return pf_kind;
}

int ptts_kernels_all(const ptts_kernels **out, int max) {
    int n = 0;
    if (n < max) out[n++] = ptts_kernels_ref();
#ifdef PTTS_CPU_X86
    int f = x86_features();
    if ((f & 1) && n < max) out[n++] = ptts_kernels_avx2();
    if ((f & 2) && n < max) out[n++] = ptts_kernels_avx512();
    if ((f & 4) && n < max) out[n++] = ptts_kernels_amx();
#elif defined(__aarch64__)
    if (n < max) out[n++] = ptts_kernels_neon(); /* Advanced SIMD is mandatory on AArch64 */
#endif
    return n;
}

const ptts_kernels *ptts_kernels_best(void) {
    const ptts_kernels *all[8];
    int n = ptts_kernels_all(all, 8);
    const char *cap = getenv("PTTS_ISA");
    if (cap && *cap) {
        int r = rank_of(cap);
        if (r < 0) {
            static atomic_int warned;
            if (!atomic_exchange(&warned, 1)) {
                ptts_log(PTTS_LOG_WARN,
                         "PTTS_ISA=%s is not one of ref, avx2, avx512, amx, neon; using the best "
                         "kernels (%s)",
                         cap, all[n - 1]->isa);
            }
            return all[n - 1];
        }
        for (int i = n - 1; i >= 0; i--)
            if (rank_of(all[i]->isa) <= r) return all[i];
    }
    return all[n - 1];
}
