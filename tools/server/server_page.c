/*
 * server_page.c - the web page of `pocket-tts serve` (GET /), self-contained: no CDN, no
 * external file. It lists the voices (GET /v1/audio/voices), takes a text and a voice (a name or
 * an uploaded clip), and plays the audio while it still arrives: fetch() of
 * /v1/audio/speech with response_format=pcm (or /tts with an upload, whose 44-byte WAV header is
 * skipped), the ReadableStream's 16-bit chunks scheduled back to back as Web Audio buffers. It
 * shows the time to the first audio and the speed, and offers the result as a WAV download.
 */
#include <stdlib.h>
#include <string.h>

#include "server.h"

/* Lines of the page (ISO C bounds a string literal to 4095 bytes: joined at run time). */
static const char *const page_parts[] = {
    "<!doctype html>\n",
    "<html lang=\"en\"><head><meta charset=\"utf-8\">\n",
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
    "<title>Pocket TTS</title><link rel=\"icon\" href=\"data:,\">\n",
    "<style>\n",
    "body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;",
    "color:#222}\n",
    "h1{font-size:1.4rem}textarea{width:100%;min-height:8rem;font:inherit;padding:.5rem;",
    "box-sizing:border-box}\n",
    "fieldset{border:1px solid #ccc;border-radius:6px;margin:1rem 0}label{margin-right:1rem}\n",
    "button{font:inherit;padding:.5rem 1.4rem;cursor:pointer}#status{margin:1rem 0;",
    "min-height:1.5rem}\n",
    ".err{color:#b00020}#stats{font-variant-numeric:tabular-nums;color:#444}\n",
    "</style></head><body>\n",
    "<h1>Pocket TTS</h1>\n",
    "<textarea id=\"text\" aria-label=\"Text\">Hello! This is Pocket TTS, speaking while the ",
    "audio is still being generated.</textarea>\n",
    "<fieldset><legend>Voice</legend>\n",
    "<label>Voice <select id=\"voice\"></select></label>\n",
    "<label id=\"uploadl\">or clone from a clip <input type=\"file\" id=\"upload\" ",
    "accept=\"audio/*\"></label>\n",
    "<label>Speed <input type=\"number\" id=\"speed\" min=\"0.25\" max=\"4\" step=\"0.05\" ",
    "value=\"1\" style=\"width:5rem\"></label>\n",
    "</fieldset>\n",
    "<button id=\"go\">Generate</button> <a id=\"download\" hidden download=\"pocket-tts.wav\">",
    "Download WAV</a>\n",
    "<div id=\"status\"></div><div id=\"stats\"></div>\n",
    "<script>\n",
    "'use strict';\n",
    "const $=id=>document.getElementById(id);\n",
    "const RATE=24000;\n",
    "window.pttsPlayer={chunks:0,samples:0,done:false,error:null};\n",
    "let ctx=null,nextTime=0;\n",
    "function status(msg,err){const s=$('status');s.textContent=msg;s.className=err?'err':'';}\n",
    "async function loadVoices(){\n",
    "  try{const r=await fetch('/v1/audio/voices');const j=await r.json();const sel=$('voice');\n",
    "    sel.innerHTML='';\n",
    "    for(const v of j.voices){const o=document.createElement('option');o.value=v.id;\n",
    "      o.textContent=v.name+(v.source==='voices_dir'?'':' (preset'+",
    "(v.loaded||v.cached?'':', download')+')');\n",
    "      if(v.id===j.default)o.selected=true;sel.appendChild(o);}\n",
    "    if(!j.voice_cloning){$('upload').disabled=true;$('uploadl').title=",
    "'this model has no voice cloning';}\n",
    "  }catch(e){status('cannot list the voices: '+e,true);}\n",
    "}\n",
    "function play(f32){\n",
    "  const b=ctx.createBuffer(1,f32.length,RATE);b.copyToChannel(f32,0);\n",
    "  const src=ctx.createBufferSource();src.buffer=b;src.connect(ctx.destination);\n",
    "  if(nextTime<ctx.currentTime+0.02)nextTime=ctx.currentTime+0.05;\n",
    "  src.start(nextTime);nextTime+=b.duration;\n",
    "}\n",
    "function wavBlob(parts,n){\n",
    "  const h=new DataView(new ArrayBuffer(44));const w=(o,s)=>{for(let i=0;i<4;i++)",
    "h.setUint8(o+i,s.charCodeAt(i));};\n",
    "  w(0,'RIFF');h.setUint32(4,36+2*n,true);w(8,'WAVE');w(12,'fmt ');h.setUint32(16,16,true);\n",
    "  h.setUint16(20,1,true);h.setUint16(22,1,true);h.setUint32(24,RATE,true);",
    "h.setUint32(28,2*RATE,true);\n",
    "  h.setUint16(32,2,true);h.setUint16(34,16,true);w(36,'data');h.setUint32(40,2*n,true);\n",
    "  return new Blob([h,...parts],{type:'audio/wav'});\n",
    "}\n",
    "async function generate(){\n",
    "  const text=$('text').value;if(!text.trim()){status('type a text first',true);return;}\n",
    "  const P=window.pttsPlayer;P.chunks=0;P.samples=0;P.done=false;P.error=null;\n",
    "  $('go').disabled=true;$('download').hidden=true;$('stats').textContent='';\n",
    "  status('generating\\u2026');\n",
    "  try{\n",
    "    if(!ctx)ctx=new (window.AudioContext||window.webkitAudioContext)({sampleRate:RATE});\n",
    "    await ctx.resume();nextTime=0;\n",
    "    const file=$('upload').files[0];let resp,skip=0;const t0=performance.now();\n",
    "    if(file){const fd=new FormData();fd.append('text',text);fd.append('voice_wav',file);\n",
    "      resp=await fetch('/tts',{method:'POST',body:fd});skip=44;}\n",
    "    else resp=await fetch('/v1/audio/speech',{method:'POST',headers:{'Content-Type':",
    "'application/json'},\n",
    "      body:JSON.stringify({model:'pocket-tts',input:text,voice:$('voice').value,",
    "response_format:'pcm',\n",
    "        speed:parseFloat($('speed').value)||1,stream:true})});\n",
    "    if(!resp.ok){let m='HTTP '+resp.status;try{const j=await resp.json();",
    "if(j.error)m+=': '+j.error.message;}catch(e){}\n",
    "      throw new Error(m);}\n",
    "    const rd=resp.body.getReader();const parts=[];let carry=null,first=-1;\n",
    "    for(;;){const {done,value}=await rd.read();if(done)break;\n",
    "      if(first<0)first=performance.now()-t0;\n",
    "      let u=value;if(skip>0){const k=Math.min(skip,u.length);u=u.subarray(k);skip-=k;}\n",
    "      if(carry){const m=new Uint8Array(carry.length+u.length);m.set(carry);",
    "m.set(u,carry.length);u=m;carry=null;}\n",
    "      if(u.length&1){carry=u.slice(u.length-1);u=u.subarray(0,u.length-1);}\n",
    "      if(!u.length)continue;\n",
    "      const bytes=u.slice();const i16=new Int16Array(bytes.buffer);parts.push(bytes);\n",
    "      const f=new Float32Array(i16.length);for(let i=0;i<i16.length;i++)f[i]=i16[i]/32768;\n",
    "      play(f);P.chunks++;P.samples+=i16.length;\n",
    "      const secs=P.samples/RATE,el=(performance.now()-t0)/1000;\n",
    "      $('stats').textContent='first audio after '+first.toFixed(0)+' ms \\u00b7 '+",
    "secs.toFixed(2)+' s of audio in '+el.toFixed(2)+' s ('+(secs/el).toFixed(2)+'\\u00d7 ",
    "real time)';\n",
    "    }\n",
    "    const a=$('download');if(a.href)URL.revokeObjectURL(a.href);\n",
    "    a.href=URL.createObjectURL(wavBlob(parts,P.samples));a.hidden=false;\n",
    "    P.done=true;status('done');\n",
    "  }catch(e){P.error=String(e.message||e);status(P.error,true);}\n",
    "  finally{$('go').disabled=false;}\n",
    "}\n",
    "$('go').addEventListener('click',generate);\n",
    "loadVoices();\n",
    "</script></body></html>\n",
    NULL};

char *srv_page_build(void) {
    size_t n = 1;
    for (int i = 0; page_parts[i]; i++)
        n += strlen(page_parts[i]);
    char *p = malloc(n), *q = p;
    if (!p) return NULL;
    for (int i = 0; page_parts[i]; i++) {
        size_t k = strlen(page_parts[i]);
        memcpy(q, page_parts[i], k);
        q += k;
    }
    *q = 0;
    return p;
}
