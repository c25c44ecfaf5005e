// The API client's types must be those of the OpenAPI document the service
// serves: a change to the API that the app was not regenerated (and
// type-checked) against fails here. JavaScript, not TypeScript, because it
// needs node's own modules, which the app's type check does not know.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const app = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

test('src/api/schema.d.ts is generated from the served OpenAPI document (run `make web`)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'contactbook-schema-'));
  try {
    const out = join(dir, 'schema.d.ts');
    execFileSync(process.execPath, [join(app, 'node_modules', 'openapi-typescript', 'bin', 'cli.js'), join(app, '..', '..', 'internal', 'httpapi', 'openapi', 'openapi.json'), '-o', out], { stdio: 'pipe' });
    const fresh = readFileSync(out, 'utf8');
    const committed = readFileSync(join(app, 'src', 'api', 'schema.d.ts'), 'utf8');
    // Not toBe: a diff of a 10,000-line file is no help; the command is.
    expect(committed === fresh, 'src/api/schema.d.ts differs from what openapi.json generates; run `make web` and commit').toBe(true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 30000);
