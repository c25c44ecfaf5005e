// Runs the browser suite: builds the service binary, then suite.mjs (every
// *.test.mjs here, or those named on the command line).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..', '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'contactbook-web-'));
const bin = join(dir, 'contactbook');
const fakes = join(dir, 'mailfakes');
try {
  execFileSync('go', ['build', '-o', bin, './cmd/contactbook'], { cwd: repo, stdio: 'inherit', env: { ...process.env, CGO_ENABLED: '0' } });
  // The SMTP relay and SES of the provider tests: the Go test servers, as a process.
  execFileSync('go', ['build', '-o', fakes, './internal/mailer/mailertest/mailfakes'], { cwd: repo, stdio: 'inherit', env: { ...process.env, CGO_ENABLED: '0' } });
  const r = spawnSync(process.execPath, ['--test-reporter=spec', join(here, 'suite.mjs')], {
    stdio: 'inherit',
    env: { ...process.env, CONTACTBOOK_BIN: bin, MAILFAKES_BIN: fakes, WEB_TESTS: process.argv.slice(2).join(',') },
  });
  process.exitCode = r.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
