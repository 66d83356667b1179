/*
 * amx_pack.h - the operand layouts of the AMX kernels (kernels_amx.c), in plain C so that
 * tests/test_amx_pack.c checks them on any CPU, AMX or not.
 *
 * Every tile the AMX kernels use has AMX_ROWS rows of AMX_COLSB bytes (one tile configuration
 * for both kernels). A tile multiply C += A B reads:
 *   tdpbf16ps: A [16][16 pairs of bf16], B [16 pair rows][16 outputs][2], C [16][16] f32:
 *              C[r][j] += sum_k (A[r][k][0] B[k][j][0] + A[r][k][1] B[k][j][1]);
 *   tdpbssd:   A [16][16 quads of s8], B [16 quad rows][16][4], C [16][16] s32:
 *              C[r][j] += sum_k sum_i A[r][k][i] B[k][j][i].
 * The bf16 kernel takes A from rows of X rounded to bf16 (row-major, 32 k per tile row) and B
 * straight from the panel layout (ptts_lin.wp16: a panel's pair row k2 is 32 outputs x 2, so
 * outputs 0-15 and 16-31 are two B tiles at a row stride of 128 bytes); only a panel's last
 * partial 16 pair rows are copied (ptts_amx_bf16_btail), so that no load passes the panel. The int8
 * kernel computes Y^T: A is 16 rows of W as stored (64 k per tile row, row stride K), B the
 * quantised rows of X in quads (ptts_amx_q8_pack_row), C[r][j] the dot product of W row r and X
 * row j.
 */
#ifndef PTTS_AMX_PACK_H
#define PTTS_AMX_PACK_H

#include <stdint.h>

#define AMX_ROWS 16
#define AMX_COLSB 64

/* The 64-byte LDTILECFG operand: palette 1, start row 0, tiles 0-7 each AMX_ROWS x AMX_COLSB. */
void ptts_amx_tilecfg(uint8_t cfg[64]);

/* Row j (< 16) of the int8 B operand from one quantised row q[0 .. Kq) (Kq a multiple of 64):
 * b[(k / 4) * 64 + j * 4 + k % 4] = q[k], i.e. Kq / 4 quad rows of 16 quads. */
void ptts_amx_q8_pack_row(const int8_t *q, int Kq, int j, int8_t *b);

/* The last t (1 .. 15) pair rows of a bf16 panel (rows of 64 bf16, the panel layout) into a
 * B buffer of 16 pair rows, rows t .. 15 zero: b[r][e] = rows[r][e] for r < t. */
void ptts_amx_bf16_btail(const uint16_t *rows, int t, uint16_t b[AMX_ROWS * 64]);

#endif
