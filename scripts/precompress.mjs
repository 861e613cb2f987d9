#!/usr/bin/env node
/**
 * Pre-compress a built web app (issue 23 item 5): next to every compressible file of DIR (default
 * web/dist) of at least 1 kB, write `<file>.br` (brotli, quality 11) and `<file>.gz` (gzip, level 9),
 * kept only when smaller than the file. The server sends them with Content-Encoding to clients that
 * accept them (server/src/http/web-app.ts). Node's zlib only; run by `npm run web:build`.
 *
 *   node scripts/precompress.mjs [DIR]
 */
import { readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|map|txt|wasm|webmanifest|xml)$/i;
const MIN_BYTES = 1024;
const dir = path.resolve(process.argv[2] ?? 'web/dist');

let raw = 0;
let br = 0;
let gz = 0;
let files = 0;
const walk = (d) => {
  for (const entry of readdirSync(d, { withFileTypes: true })) {
    const file = path.join(d, entry.name);
    if (entry.isDirectory()) {
      walk(file);
      continue;
    }
    if (!COMPRESSIBLE.test(entry.name)) continue;
    const data = readFileSync(file);
    for (const suffix of ['.br', '.gz']) {
      try {
        unlinkSync(file + suffix);
      } catch {
        // none from an earlier build
      }
    }
    if (data.length < MIN_BYTES) continue;
    const b = brotliCompressSync(data, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: data.length, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT },
    });
    const g = gzipSync(data, { level: 9 });
    if (b.length < data.length) writeFileSync(file + '.br', b);
    if (g.length < data.length) writeFileSync(file + '.gz', g);
    files++;
    raw += data.length;
    br += Math.min(b.length, data.length);
    gz += Math.min(g.length, data.length);
  }
};
if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
  console.error(`precompress: ${dir} is not a directory (build the web app first)`);
  process.exit(1);
}
walk(dir);
const kb = (n) => `${(n / 1024).toFixed(1)} kB`;
console.log(`precompress: ${files} files in ${path.relative(process.cwd(), dir) || '.'}: ${kb(raw)} raw, ${kb(gz)} gzip, ${kb(br)} brotli`);
