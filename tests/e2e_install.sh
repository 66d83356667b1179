#!/usr/bin/env bash
# End-to-end: `cmake --install` into a scratch prefix, then use what it installed the way an
# application does: the shared library exports exactly the public API; examples/hello.c built
# with `pkg-config --cflags --libs pocket-tts` and by a CMake find_package(PocketTTS) consumer
# runs against the installed library on the tiny fixture; the installed binary speaks; the
# manual pages render without warnings; the version copies (man pages, python/pyproject.toml)
# are CMakeLists.txt's.
# Usage: e2e_install.sh POCKET_TTS FIXTURES_DIR (POCKET_TTS in the build folder to install)
set -u
bin=$1
fx=$2
build=$(cd "$(dirname "$bin")" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }
p=$tmp/prefix

cmake --install "$build" --prefix "$p" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; exit 1; }
ok "cmake --install into $p"
libdir=$(PKG_CONFIG_PATH=$(dirname "$(find "$p" -name pocket-tts.pc)") pkg-config --variable=libdir pocket-tts)
export PKG_CONFIG_PATH=$libdir/pkgconfig
libdir=$(cd "$libdir" && pwd -P)
# uses_installed PROGRAM: its libpocket-tts.so.0 resolves into the installed libdir
uses_installed() {
  local l
  l=$(ldd "$1" | sed -n 's/.*libpocket-tts\.so\.0 => \(.*\) (0x.*/\1/p')
  [ -n "$l" ] && [ "$(dirname "$(readlink -f "$l")")" = "$libdir" ]
}
for f in "$p/bin/pocket-tts" "$libdir/libpocket-tts.a" "$libdir/libpocket-tts.so" \
  "$p/include/ptts.h" "$p/share/man/man1/pocket-tts.1" "$p/share/man/man3/libpocket-tts.3" \
  "$libdir/cmake/PocketTTS/PocketTTSConfig.cmake"; do
  [ -e "$f" ] || bad "not installed: $f"
done
so=$(readlink -f "$libdir/libpocket-tts.so")
objdump -p "$so" | grep -q 'SONAME *libpocket-tts\.so\.0$' && ok "SONAME libpocket-tts.so.0" || bad "SONAME"

# exported: exactly the functions the installed headers declare (the version node aside)
grep -ohE '\bptts_[a-z0-9_]+\(' "$p"/include/ptts*.h | tr -d '(' | sort -u >"$tmp/declared"
nm -D --defined-only "$so" | awk '$2 != "A" {sub(/@.*/, "", $3); print $3}' | sort -u >"$tmp/exported"
if diff "$tmp/declared" "$tmp/exported" >"$tmp/sym.diff"; then
  ok "exports the $(wc -l <"$tmp/declared") declared functions, nothing else"
else
  bad "exported symbols differ from the headers (< declared only, > exported only):"
  cat "$tmp/sym.diff"
fi
grep -q ptts_version "$tmp/exported" && ok "ptts_version exported" || bad "no ptts_version"

# the C example with pkg-config, against the installed shared library
args=("$fx/tiny/config.yaml" "$fx/tiny/model.safetensors" "$fx/tokenizer/sp_unigram_tiny.model"
  "$fx/tiny/voice.safetensors")
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Wpedantic -Werror "$root/examples/hello.c" -o "$tmp/hello" \
  $(pkg-config --cflags --libs pocket-tts) -Wl,-rpath,"$libdir" 2>"$tmp/cc.err" &&
  ok "hello.c compiles with pkg-config" || bad "hello.c: $(cat "$tmp/cc.err")"
uses_installed "$tmp/hello" && ok "linked to the installed library" ||
  bad "hello does not use $libdir: $(ldd "$tmp/hello" | grep pocket)"
"$tmp/hello" "${args[@]}" "$tmp/hello.wav" "Hello world." >"$tmp/hello.out" 2>&1 &&
  [ "$(od -An -tu4 -j24 -N4 "$tmp/hello.wav" | tr -d ' ')" = 24000 ] &&
  [ "$(stat -c %s "$tmp/hello.wav")" -gt 1000 ] && ok "hello speaks: $(cat "$tmp/hello.out")" ||
  bad "hello: $(cat "$tmp/hello.out")"

# the same example from a CMake project: find_package(PocketTTS), PocketTTS::pocket-tts
mkdir -p "$tmp/consumer"
cat >"$tmp/consumer/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.18)
project(consumer C)
find_package(PocketTTS 0 REQUIRED)
add_executable(hello "$root/examples/hello.c")
target_link_libraries(hello PRIVATE PocketTTS::pocket-tts)
CM
if cmake -S "$tmp/consumer" -B "$tmp/consumer/b" -DCMAKE_PREFIX_PATH="$p" >"$tmp/cm.log" 2>&1 &&
  cmake --build "$tmp/consumer/b" >>"$tmp/cm.log" 2>&1; then
  "$tmp/consumer/b/hello" "${args[@]}" "$tmp/hello_cmake.wav" "Hello world." >/dev/null 2>&1 &&
    cmp -s "$tmp/hello.wav" "$tmp/hello_cmake.wav" && ok "find_package consumer: the same audio" ||
    bad "the find_package consumer's audio differs"
  uses_installed "$tmp/consumer/b/hello" &&
    ok "consumer linked to the installed library" || bad "consumer library"
else
  bad "find_package consumer: $(tail -20 "$tmp/cm.log")"
fi

# the installed binary: its version is the library's, and it speaks the fixture
want="pocket-tts $(sed -n 's/.*(pocket-tts \(.*\))$/\1/p' "$tmp/hello.out")"
[ "$("$p/bin/pocket-tts" --version)" = "$want" ] && ok "--version = ptts_version(): $want" ||
  bad "--version '$("$p/bin/pocket-tts" --version)' vs '$want'"
"$p/bin/pocket-tts" generate --config "$fx/tiny/manifest.json" --weights "$fx/tiny/model.safetensors" \
  --voice "$fx/tiny/voice.safetensors" --text "Hello world." --seed 1 -q -o "$tmp/bin.wav" 2>"$tmp/bin.err" &&
  [ "$(stat -c %s "$tmp/bin.wav")" -gt 1000 ] && ok "the installed pocket-tts speaks" ||
  bad "installed pocket-tts: $(cat "$tmp/bin.err")"

# the manual pages render without warnings and name this version; the Python package too
for m in "$p"/share/man/man*/*; do
  w=$(groff -ww -z -man "$m" 2>&1)
  [ -z "$w" ] && ok "man $(basename "$m") renders" || bad "man $(basename "$m"): $w"
  grep -q "^\.TH .*\"pocket-tts-c ${want#pocket-tts }\"" "$m" && ok "man $(basename "$m") says ${want#pocket-tts }" ||
    bad "man $(basename "$m"): .TH does not name version ${want#pocket-tts }"
done
grep -qx "version = \"${want#pocket-tts }\"" "$root/python/pyproject.toml" && ok "python/pyproject.toml: the same version" ||
  bad "python/pyproject.toml's version is not ${want#pocket-tts }"
exit $fail
