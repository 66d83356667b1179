#!/usr/bin/env bash
# Installs the Debian packages pocket-tts-c builds and tests with (run as root or with sudo).
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake pkg-config clang clang-format libclang-rt-14-dev \
  libcjson-dev libyaml-dev libutf8proc-dev libsndfile1-dev \
  libmicrohttpd-dev libcurl4-openssl-dev librubberband-dev libopus-dev libogg-dev \
  libavcodec-dev \
  libvulkan-dev glslc mesa-vulkan-drivers \
  python3 python3-numpy python3-pip python3-websockets ca-certificates chromium sox haproxy \
  debhelper devscripts lintian dpkg-dev groff-base man-db speech-dispatcher python3-speechd \
  gcc-aarch64-linux-gnu qemu-user libc6-dev-arm64-cross >/dev/null
# Node.js and npm for the browser and OpenAI SDK tests: Debian's, unless a Node.js is already
# installed (NodeSource's nodejs bundles npm and conflicts with Debian's npm package)
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
