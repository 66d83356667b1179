/* amx_pack.c - the AMX kernels' operand layouts (amx_pack.h), plain C: built without AMX flags,
 * run on every CPU by tests/test_amx_pack.c. */
#include "amx_pack.h"

#include <string.h>

void ptts_amx_tilecfg(uint8_t cfg[64]) {
    memset(cfg, 0, 64);
    cfg[0] = 1; /* palette 1; byte 1 (start row) 0 */
    for (int t = 0; t < 8; t++) {
        cfg[16 + 2 * t] = AMX_COLSB; /* bytes per row, little-endian u16 at 16 + 2t */
        cfg[48 + t] = AMX_ROWS;      /* rows, u8 at 48 + t */
    }
}

void ptts_amx_q8_pack_row(const int8_t *q, int Kq, int j, int8_t *b) {
    for (int k4 = 0; k4 < Kq / 4; k4++)
        memcpy(b + (size_t)k4 * AMX_COLSB + (size_t)j * 4, q + (size_t)k4 * 4, 4);
}

void ptts_amx_bf16_btail(const uint16_t *rows, int t, uint16_t b[AMX_ROWS * 64]) {
    memcpy(b, rows, (size_t)t * 64 * sizeof(uint16_t));
    memset(b + (size_t)t * 64, 0, (size_t)(AMX_ROWS - t) * 64 * sizeof(uint16_t));
}
