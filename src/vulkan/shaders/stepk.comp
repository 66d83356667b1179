#version 450
#extension GL_GOOGLE_include_directive : require
#include "stepk.glsl" // 256 invocations a workgroup
