// The browser suite as one process: one service, one database, one browser,
// the suites of the *.test.mjs files side by side (WEB_TEST_CONCURRENCY at
// a time, 2 by default; WEB_TESTS=a,b runs the files whose names hold a or b).
import { readdirSync } from 'node:fs';
import { after, describe } from 'node:test';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopAll } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const only = (process.env.WEB_TESTS ?? '').split(',').filter(Boolean);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.test.mjs'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
const suites = await Promise.all(files.map((f) => import(`./${f}`)));

describe('dashboard', { concurrency: Number(process.env.WEB_TEST_CONCURRENCY ?? 2) }, () => {
  for (const s of suites) s.default();
});
after(stopAll);
