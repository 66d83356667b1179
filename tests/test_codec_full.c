// ctest-label: full
// ctest-timeout: 900
/*
 * test_codec_full.c - the Mimi codec at full size (english_2026-04: C 512, nf 64, 8 codec
 * heads; pocket-fill-v1 weights) against tests/fixtures/full/mimi_decode and mimi_encode:
 * the same checks as test_codec.c (decoder pcm [20, 1920] and taps [512, 16]; encoder seanet
 * and tr [512, T*16], latents [T, 32], conditioning [T, 1024]), relative L2 <= 1e-4.
 */
#define CODEC_TEST_SIZE "full"
#include "test_codec.c"
