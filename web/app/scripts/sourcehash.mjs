// The hash of everything the build reads. The build writes it to
// dist/.source-sha256; a Go test (web/app) recomputes it the same way and
// fails when the committed dist is older than its sources.
//
// Algorithm (mirrored in app_test.go): for each input file, sorted by its
// slash-separated path relative to web/app, the line
// "<sha256 hex of content>  <path>\n"; the hash is the sha256 hex of all lines.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';

export const inputs = ['index.html', 'package.json', 'package-lock.json', 'tsconfig.json', 'vite.config.ts', 'scripts', 'src'];

function walk(root, path, out) {
  const full = join(root, path);
  if (statSync(full).isDirectory()) {
    for (const name of readdirSync(full)) walk(root, join(path, name), out);
  } else {
    out.push(path.split(sep).join('/'));
  }
}

export function sourceHash(root) {
  const files = [];
  for (const input of inputs) walk(root, input, files);
  files.sort();
  const all = createHash('sha256');
  for (const f of files) {
    const sum = createHash('sha256').update(readFileSync(join(root, f))).digest('hex');
    all.update(`${sum}  ${f}\n`);
  }
  return all.digest('hex');
}

