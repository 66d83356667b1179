/* version.c - ptts_version(): the project version that CMakeLists.txt passes as
 * PTTS_VERSION_STRING. */
#include "ptts.h"

const char *ptts_version(void) { return PTTS_VERSION_STRING; }
