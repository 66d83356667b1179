// A browser's WebSocket against `pocket-tts serve`'s /v1/tts/stream-input, in headless Chromium
// (playwright-core): from the server's own page, a sentence sent word by word and ended comes
// back as binary PCM messages after "ready", then "done"; the bytes equal `pocket-tts generate`'s
// for the same text (its 200 ms tail cut), and a second utterance with base64 JSON audio gives
// the same bytes. Usage: node ws_browser_test.js URL GENERATED.wav  (NODE_PATH has
// playwright-core)
'use strict';
const fs = require('fs');
const { chromium } = require('playwright-core');
const [url, wav] = process.argv.slice(2);
let failed = 0;
const check = (ok, what) => { console.log((ok ? 'ok: ' : 'FAIL: ') + what); if (!ok) failed++; };

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', e => errors.push(String(e)));
  await page.goto(url);
  const speak = binary => page.evaluate(async binary => {
    const ws = new WebSocket(location.origin.replace(/^http/, 'ws') + '/v1/tts/stream-input');
    ws.binaryType = 'arraybuffer';
    const parts = [], types = [];
    const finished = new Promise((resolve, reject) => {
      ws.onmessage = ev => {
        if (typeof ev.data !== 'string') { parts.push(new Uint8Array(ev.data)); return; }
        const m = JSON.parse(ev.data);
        types.push(m.type);
        if (m.type === 'audio') parts.push(Uint8Array.from(atob(m.audio), c => c.charCodeAt(0)));
        if (m.type === 'done' || m.type === 'error') resolve(m);
      };
      ws.onerror = () => reject(new Error('websocket error'));
    });
    await new Promise(r => { ws.onopen = r; });
    ws.send(JSON.stringify({ binary, idle_flush_ms: 0 }));
    for (const w of ['Hello ', 'from ', 'the ', 'browser.']) ws.send(JSON.stringify({ text: w }));
    ws.send(JSON.stringify({ text: '' }));
    const last = await finished;
    ws.close();
    let n = 0;
    for (const p of parts) n += p.length;
    const all = new Uint8Array(n);
    n = 0;
    for (const p of parts) { all.set(p, n); n += p.length; }
    return { last, types, bytes: Array.from(all) };
  }, binary);
  const ref = fs.readFileSync(wav).subarray(44);
  const want = ref.subarray(0, ref.length - 2 * 4800);
  for (const binary of [true, false]) {
    const r = await speak(binary);
    const got = Buffer.from(r.bytes);
    check(r.types[0] === 'ready' && r.last.type === 'done', `binary=${binary}: ready ... done (${r.types.length} messages)`);
    check(got.length === want.length && got.equals(want),
          `binary=${binary}: the browser got generate's samples (${got.length} vs ${want.length} bytes)`);
  }
  check(errors.length === 0, `no page errors ${errors.join('; ')}`);
  await browser.close();
  process.exit(failed ? 1 : 0);
})().catch(e => { console.log('FAIL: ' + e); process.exit(1); });
