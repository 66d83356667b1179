#version 450
#extension GL_GOOGLE_include_directive : require
// stepk with 1024 invocations a workgroup
#define WGS 1024u
#include "stepk.glsl"
