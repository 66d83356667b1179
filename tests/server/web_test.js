// The web page of `pocket-tts serve` in headless Chromium (playwright-core): the voices load,
// typing a text and clicking Generate plays audio while it arrives (the page's player receives
// PCM chunks), a WAV download is offered, the speed is shown, the upload path works too, and the
// console has no errors. Usage: node web_test.js URL CLIP.wav  (NODE_PATH has playwright-core)
'use strict';
const { chromium } = require('playwright-core');
const [url, clip] = process.argv.slice(2);
let failed = 0;
const check = (ok, what) => { console.log((ok ? 'ok: ' : 'FAIL: ') + what); if (!ok) failed++; };

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync',
           '--autoplay-policy=no-user-gesture-required'],
  });
  const page = await browser.newPage();
  const errors = [];
  page.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', e => errors.push(String(e)));
  await page.goto(url);
  await page.waitForFunction(() => document.querySelectorAll('#voice option').length > 0, null, { timeout: 10000 });
  const voice = await page.$eval('#voice', s => s.value);
  check(voice === 'tiny', `voices listed, default selected (${voice})`);
  await page.fill('#text', 'Hello from the browser test. The audio plays while it arrives.');
  await page.click('#go');
  await page.waitForFunction(() => window.pttsPlayer.done || window.pttsPlayer.error, null, { timeout: 60000 });
  let p = await page.evaluate(() => window.pttsPlayer);
  check(!p.error && p.chunks > 0 && p.samples > 24000, `named voice: player got ${p.chunks} chunks, ${p.samples} samples ${p.error || ''}`);
  check(await page.isVisible('#download'), 'download link offered');
  const href = await page.$eval('#download', a => a.href);
  const wavLen = await page.evaluate(async h => (await (await fetch(h)).arrayBuffer()).byteLength, href);
  check(wavLen === 44 + 2 * p.samples, `download is a WAV of the received audio (${wavLen} bytes)`);
  const stats = await page.textContent('#stats');
  check(/first audio after \d+ ms/.test(stats) && /real time/.test(stats), `speed shown: ${stats}`);
  // the upload path (/tts with voice_wav)
  await page.setInputFiles('#upload', clip);
  await page.click('#go');
  await page.waitForFunction(() => window.pttsPlayer.done || window.pttsPlayer.error, null, { timeout: 60000 });
  p = await page.evaluate(() => window.pttsPlayer);
  check(!p.error && p.chunks > 0 && p.samples > 24000, `uploaded voice: player got ${p.chunks} chunks, ${p.samples} samples ${p.error || ''}`);
  // an error from the server is shown, not thrown
  await page.setInputFiles('#upload', []);
  await page.fill('#text', '   x'.repeat(6000));
  await page.click('#go');
  await page.waitForFunction(() => window.pttsPlayer.done || window.pttsPlayer.error, null, { timeout: 60000 });
  const shown = await page.textContent('#status');
  check(/HTTP 400/.test(shown), `server error shown on the page: ${shown}`);
  const unexpected = errors.filter(e => !/status of 400/.test(e));
  check(unexpected.length === 0, `no console errors ${unexpected.join(' | ')}`);
  await browser.close();
  process.exit(failed ? 1 : 0);
})().catch(e => { console.log('FAIL: ' + e); process.exit(1); });
