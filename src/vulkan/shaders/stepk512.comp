#version 450
#extension GL_GOOGLE_include_directive : require
// stepk with 512 invocations a workgroup
#define WGS 512u
#include "stepk.glsl"
