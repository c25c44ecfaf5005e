// Runs the browser suite: builds the service binary once, then every
// *.test.mjs here with node's test runner, one file at a time (each file
// starts its own service, database and browser).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..', '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'contactbook-web-'));
const bin = join(dir, 'contactbook');
try {
  execFileSync('go', ['build', '-o', bin, './cmd/contactbook'], { cwd: repo, stdio: 'inherit', env: { ...process.env, CGO_ENABLED: '0' } });
  const only = process.argv.slice(2);
  const files = readdirSync(here)
    .filter((f) => f.endsWith('.test.mjs'))
    .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
    .map((f) => join(here, f));
  const r = spawnSync(process.execPath, ['--test', '--test-concurrency=1', ...files], { stdio: 'inherit', env: { ...process.env, CONTACTBOOK_BIN: bin } });
  process.exitCode = r.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
