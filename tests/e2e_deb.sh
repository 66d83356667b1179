#!/usr/bin/env bash
# End-to-end: the Debian packages. Builds pocket-tts, libpocket-tts0, libpocket-tts-dev and
# speech-dispatcher-pocket-tts with
# `dpkg-buildpackage -b -us -uc` in a copy of the tree (the source tree's build folders stay as
# they are), checks them with lintian (no error or warning), installs them with dpkg -i, speaks
# the tiny fixture with the installed /usr/bin/pocket-tts, builds examples/hello.c with
# `pkg-config --cflags --libs pocket-tts` against the installed -dev package and runs it, then
# removes the packages. Needs root and dpkg-buildpackage (exit 77, skipped, otherwise).
# Usage: e2e_deb.sh POCKET_TTS FIXTURES_DIR (POCKET_TTS is not used: the package builds its own)
set -u
fx=$2
root=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" -ne 0 ]; then echo "skip: not root (dpkg -i)"; exit 77; fi
for t in dpkg-buildpackage dh lintian; do
  command -v $t >/dev/null || { echo "skip: no $t (scripts/install-deps.sh installs it)"; exit 77; }
done
pkgs=(pocket-tts libpocket-tts0 libpocket-tts-dev speech-dispatcher-pocket-tts)
for p in "${pkgs[@]}"; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
    echo "FAIL: $p is installed already: this test would replace and remove it"
    exit 1
  fi
done
tmp=$(mktemp -d)
cleanup() {
  dpkg -r "${pkgs[@]}" >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }

# the tree as git sees it (tracked and untracked, not ignored): the build runs test_public_api
mkdir "$tmp/src"
(cd "$root" && git ls-files -co --exclude-standard |
  tar -cf - -T -) | tar -xf - -C "$tmp/src"
start=$(date +%s)
if (cd "$tmp/src" && dpkg-buildpackage -b -us -uc -j2) >"$tmp/build.log" 2>&1; then
  ok "dpkg-buildpackage in $(($(date +%s) - start)) s"
else
  tail -40 "$tmp/build.log"
  echo "FAIL: dpkg-buildpackage"
  exit 1
fi
for p in "${pkgs[@]}"; do
  ls "$tmp/${p}_"*.deb >/dev/null 2>&1 && ok "built $p" || bad "no $p package"
done
# lintian: errors and warnings fail (debian/README.source explains what is left)
lintian --fail-on error,warning "$tmp"/*.changes >"$tmp/lintian.log" 2>&1 &&
  ok "lintian: no error or warning" || bad "lintian: $(cat "$tmp/lintian.log")"

debs=()
for p in "${pkgs[@]}"; do debs+=("$tmp/${p}_"*.deb); done
dpkg -i "${debs[@]}" >"$tmp/dpkg.log" 2>&1 && ok "dpkg -i" || { cat "$tmp/dpkg.log"; bad "dpkg -i"; exit 1; }

# the speech-dispatcher module where the daemon looks, with its config file; it starts (INIT
# answers 299 with the shipped config, or 399 with the reason where the model is not cached)
m=/usr/lib/speech-dispatcher-modules/sd_pocket-tts
[ -x "$m" ] && [ -f /etc/speech-dispatcher/modules/pocket-tts.conf ] &&
  printf 'INIT\nQUIT\n' | HF_HUB_OFFLINE=1 timeout 60 "$m" /etc/speech-dispatcher/modules/pocket-tts.conf 2>/dev/null |
  grep -Eq '^(299 OK LOADED|399 ERR CANT INIT)' && ok "speech-dispatcher module installed, answers INIT" ||
  bad "speech-dispatcher module: $m"

# the version: debian/changelog, the command and the library agree
deb_version=$(dpkg-query -W -f='${Version}' pocket-tts)
[ "$(/usr/bin/pocket-tts --version)" = "pocket-tts $deb_version" ] &&
  ok "pocket-tts --version = package version $deb_version" ||
  bad "version: $(/usr/bin/pocket-tts --version) vs package $deb_version"
/usr/bin/pocket-tts generate --config "$fx/tiny/manifest.json" --weights "$fx/tiny/model.safetensors" \
  --voice "$fx/tiny/voice.safetensors" --text "Hello world." --seed 1 -q -o "$tmp/bin.wav" 2>"$tmp/bin.err" &&
  [ "$(stat -c %s "$tmp/bin.wav")" -gt 1000 ] && ok "the installed pocket-tts speaks" ||
  bad "installed pocket-tts: $(cat "$tmp/bin.err")"
man -w pocket-tts >/dev/null 2>&1 && ok "man pocket-tts installed" || bad "no manual page"

# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Wpedantic -Werror "$root/examples/hello.c" -o "$tmp/hello" \
  $(pkg-config --cflags --libs pocket-tts) 2>"$tmp/cc.err" && ok "hello.c compiles against the -dev package" ||
  bad "hello.c: $(cat "$tmp/cc.err")"
lib=$(ldd "$tmp/hello" | sed -n 's/.*libpocket-tts\.so\.0 => \(.*\) (0x.*/\1/p')
[ -n "$lib" ] && [ "$(readlink -f "$lib")" = "$(readlink -f "$(dpkg -L libpocket-tts0 | grep '\.so\.0$')")" ] && ok "hello uses the packaged library" ||
  bad "hello library: $(ldd "$tmp/hello" | grep pocket)"
"$tmp/hello" "$fx/tiny/config.yaml" "$fx/tiny/model.safetensors" "$fx/tokenizer/sp_unigram_tiny.model" \
  "$fx/tiny/voice.safetensors" "$tmp/hello.wav" "Hello world." >"$tmp/hello.out" 2>&1 &&
  grep -q "(pocket-tts $deb_version)" "$tmp/hello.out" && ok "hello speaks: $(cat "$tmp/hello.out")" ||
  bad "hello: $(cat "$tmp/hello.out")"

dpkg -r "${pkgs[@]}" >"$tmp/remove.log" 2>&1 && [ ! -e /usr/bin/pocket-tts ] && ok "dpkg -r" ||
  bad "dpkg -r: $(cat "$tmp/remove.log")"
exit $fail
