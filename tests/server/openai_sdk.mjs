// OpenAI's own Node SDK (npm "openai") against `pocket-tts serve` on the tiny fixture model:
// every response_format through client.audio.speech.create with the bytes checked, SSE events
// parsed by the SDK's own Stream.fromSSEResponse, voice "alloy" (mapped by --voice-map to the
// fixture voice), a voice object, speed 1.5, instructions, per-request options as extra body
// members, GET /v1/models through client.models.list, and a refusal surfacing as the SDK's
// APIError. The server runs at temperature 0, so equal requests give equal bytes.
// Usage: node openai_sdk.mjs BASE_URL SDK_DIR  (SDK_DIR: the folder of the installed package)
import { pathToFileURL } from 'node:url';

const [base, sdkDir] = process.argv.slice(2);
const { default: OpenAI, APIError } = await import(pathToFileURL(`${sdkDir}/index.mjs`).href);
const { Stream } = await import(pathToFileURL(`${sdkDir}/core/streaming.mjs`).href);

let failed = 0, checks = 0;
const check = (ok, what) => {
  checks++;
  console.log((ok ? 'ok: ' : 'FAIL: ') + what);
  if (!ok) failed++;
};
const client = new OpenAI({ apiKey: 'sk-unused', baseURL: `${base}/v1`, maxRetries: 0 });
const INPUT = 'Hello from the OpenAI SDK test.';
const bytesOf = async (params) =>
  Buffer.from(await (await client.audio.speech.create(params)).arrayBuffer());

// the formats this build writes, as the server lists them
const served = (await (await fetch(`${base}/v1/audio/voices`)).json()).formats;
const magic = {
  wav: (b) => b.subarray(0, 4).toString() === 'RIFF' && b.subarray(8, 12).toString() === 'WAVE',
  flac: (b) => b.subarray(0, 4).toString() === 'fLaC',
  opus: (b) => b.subarray(0, 4).toString() === 'OggS' && b.subarray(28, 36).toString() === 'OpusHead',
  mp3: (b) => b.subarray(0, 3).toString() === 'ID3' || (b[0] === 0xff && (b[1] & 0xe0) === 0xe0),
  aac: (b) => b[0] === 0xff && (b[1] & 0xf6) === 0xf0, // ADTS sync, layer 0
  pcm: (b) => b.length % 2 === 0,
};
const got = {};
for (const fmt of ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm']) {
  const params = { model: 'tts-1', voice: 'alloy', input: INPUT, response_format: fmt };
  if (served.includes(fmt)) {
    const b = await bytesOf(params);
    got[fmt] = b;
    check(b.length > 500 && magic[fmt](b), `${fmt}: ${b.length} bytes, starts ${b.subarray(0, 4).toString('hex')}`);
  } else {
    try {
      await bytesOf(params);
      check(false, `${fmt} is not written by this server, yet it answered 200`);
    } catch (e) {
      check(e instanceof APIError && e.status === 400 && e.param === 'response_format' &&
            /wav, pcm/.test(e.message), `${fmt}: APIError 400 listing the formats (${e.message})`);
    }
  }
}
const pcm = got.pcm;
check(got.wav.subarray(44).equals(pcm), 'the wav body is the pcm');

// voice names: alloy is mapped to the fixture voice; a voice object {id} names one too
const tiny = await bytesOf({ model: 'gpt-4o-mini-tts', voice: 'tiny', input: INPUT, response_format: 'pcm' });
check(tiny.equals(pcm), 'voice "alloy" speaks as the voice --voice-map names');
const byId = await bytesOf({ model: 'tts-1', voice: { id: 'tiny' }, input: INPUT, response_format: 'pcm' });
check(byId.equals(pcm), 'voice {"id": "tiny"}');
const withInstr = await bytesOf({ model: 'gpt-4o-mini-tts', voice: 'alloy', input: INPUT,
                                  instructions: 'Speak cheerfully.', response_format: 'pcm' });
check(withInstr.equals(pcm), 'instructions accepted and ignored');

// speed 1.5: fewer samples, pitch kept (Rubber Band)
const fast = await bytesOf({ model: 'tts-1', voice: 'alloy', input: INPUT, response_format: 'pcm', speed: 1.5 });
const ratio = fast.length / pcm.length;
check(Math.abs(ratio * 1.5 - 1) < 0.1, `speed 1.5: length ratio ${ratio.toFixed(3)}`);

// SSE through the SDK's own stream helper: deltas that concatenate to the same audio, then done
for (const fmt of ['pcm', 'wav']) {
  const resp = await client.audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'alloy', input: INPUT,
                                                  response_format: fmt, stream_format: 'sse' });
  check(/^text\/event-stream/.test(resp.headers.get('content-type')), `sse ${fmt}: text/event-stream`);
  const events = [];
  for await (const ev of Stream.fromSSEResponse(resp, new AbortController())) events.push(ev);
  const deltas = events.filter((e) => e.type === 'speech.audio.delta');
  const audio = Buffer.concat(deltas.map((e) => Buffer.from(e.audio, 'base64')));
  const done = events[events.length - 1];
  check(deltas.length > 0 && audio.subarray(fmt === 'wav' ? 44 : 0).equals(pcm),
        `sse ${fmt}: ${deltas.length} delta events, ${audio.length} bytes = the ${fmt} body`);
  const u = done && done.usage;
  check(done && done.type === 'speech.audio.done' && u && u.input_tokens === INPUT.length &&
        u.output_tokens > 0 && u.total_tokens === u.input_tokens + u.output_tokens,
        `sse ${fmt}: speech.audio.done last, usage ${JSON.stringify(u)}`);
}
try {
  await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: INPUT,
                                     response_format: 'flac', stream_format: 'sse' });
  check(false, 'sse flac answered 200');
} catch (e) {
  check(e instanceof APIError && e.status === 400 && e.param === 'stream_format', `sse flac: 400 (${e.message})`);
}

// per-request options as extra body members: a seed repeats, another seed differs
const seeded = (seed) => bytesOf({ model: 'tts-1', voice: 'alloy', input: INPUT, response_format: 'pcm',
                                   temperature: 0.8, seed });
const [a, b, c] = [await seeded(7), await seeded(7), await seeded(8)];
check(a.equals(b) && !a.equals(c), 'temperature 0.8: seed 7 twice gives equal bytes, seed 8 others');
try {
  await bytesOf({ model: 'tts-1', voice: 'alloy', input: INPUT, decode_steps: 0 });
  check(false, 'decode_steps 0 answered 200');
} catch (e) {
  check(e instanceof APIError && e.status === 400 && e.param === 'decode_steps', `decode_steps 0: 400 (${e.message})`);
}

// the model list, with what happens to instructions
const models = [];
for await (const m of client.models.list()) models.push(m);
check(models.some((m) => m.id === 'tts-1') && models.every((m) => /ignored/.test(m.instructions)),
      `models.list: ${models.map((m) => m.id).join(', ')}`);

console.log(failed ? `${failed} of ${checks} checks FAILED` : `all ${checks} checks passed`);
process.exit(failed || checks === 0 ? 1 : 0);
