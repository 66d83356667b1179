/*
 * backend.h - internal calls on a model's compute backend that tests and benchmarks use (not
 * part of ptts.h).
 */
#ifndef PTTS_BACKEND_H
#define PTTS_BACKEND_H

#include "engine.h"

/* The GPU engine's test hooks for the engines this model creates from now on (idle engines made
 * with the old ones are dropped); NULL clears them. The names in t must outlive the model. */
void ptts_model_set_vk_tuning(ptts_model *m, const ptts_vk_tuning *t);

#endif
