#!/usr/bin/env bash
# End-to-end: the Vulkan backend through the command line and the server (tests/e2e/vulkan.py):
# `devices`, --device by number and by name, clear errors for devices that do not exist, what
# --backend auto picks, and generate / serve on the GPU matching the CPU's audio.
# Usage: e2e_vulkan.sh POCKET_TTS FIXTURES_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
exec python3 -B "$here/e2e/vulkan.py" "$1" "$2"
