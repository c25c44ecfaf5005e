import { defineConfig } from 'vitest/config';
import preact from '@preact/preset-vite';

// The dashboard is served by the Go binary under /app/; `npm run dev` serves it
// from Vite and passes /api to the Go server (API_ORIGIN, default :8080).
export default defineConfig({
  base: '/app/',
  plugins: [preact({ prerender: { enabled: false } })],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // The preload polyfill would be inlined; every supported browser has modulepreload.
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  server: {
    proxy: { '/api': (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env.API_ORIGIN ?? 'http://127.0.0.1:8080' },
  },
  test: {
    include: ['tests/unit/**/*.test.{ts,mjs}'],
    environment: 'node',
  },
});
