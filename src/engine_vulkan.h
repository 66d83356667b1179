/*
 * engine_vulkan.h - the Vulkan engine (src/vulkan/) behind engine.h, and a device probe for
 * backend selection. Built when CMake finds the Vulkan loader and glslc (PTTS_VULKAN); otherwise
 * src/vulkan/absent.c answers that the backend is not built.
 */
#ifndef PTTS_ENGINE_VULKAN_H
#define PTTS_ENGINE_VULKAN_H

#include <stddef.h>

#include "engine.h"

/* The engine's operations, or NULL when the library was built without Vulkan. */
const ptts_engine_ops *ptts_vulkan_engine(void);

/* The device the engine would use: 0 and its name / whether it is a discrete GPU, or < 0 with
 * e filled (not built, no loader, no device). */
int ptts_vulkan_probe(char *name, size_t name_size, int *discrete, ptts_error *e);

/* Workgroups of the one-dispatch step (stepk.comp) of an engine instance, 0 when it is off. */
int ptts_vulkan_engine_stepk(void *eng);

/* Bytes of GPU buffers an engine instance holds (weights, caches, scratch, I/O). */
size_t ptts_vulkan_engine_bytes(void *eng);

#endif
