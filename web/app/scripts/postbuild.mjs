// After `vite build`: precompress every text asset (the server sends the .gz
// when the browser accepts gzip), record the source hash, and print the size
// budget check (first load of compressed JS+CSS).
import { gzipSync, constants } from 'node:zlib';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourceHash } from './sourcehash.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const budget = 150 * 1024;

function files(dir) {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

const sizes = new Map();
for (const f of files(dist)) {
  if (!/\.(js|css|html|svg|json)$/.test(f)) continue;
  const gz = gzipSync(readFileSync(f), { level: constants.Z_BEST_COMPRESSION });
  writeFileSync(f + '.gz', gz);
  sizes.set(f.slice(dist.length + 1), gz.length);
}

// The first load is what index.html references: its script, stylesheet and preloads.
const html = readFileSync(join(dist, 'index.html'), 'utf8');
const first = [...html.matchAll(/(?:src|href)="\/app\/([^"]+\.(?:js|css))"/g)].map((m) => m[1]);
const total = first.reduce((n, f) => n + (sizes.get(f) ?? 0), 0);
writeFileSync(join(dist, '.source-sha256'), sourceHash(root) + '\n');
console.log(`first load: ${(total / 1024).toFixed(1)} KB gzip (${first.join(', ')}); budget ${budget / 1024} KB`);
if (total > budget) {
  console.error('first load exceeds the budget');
  process.exit(1);
}
