#!/usr/bin/env node
// The `scour` command. Runs the compiled CLI (npm ci builds it; `npm run build` rebuilds).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/config/cli.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('scour: not built yet; run `npm run build` (or `npm ci`, which builds) first\n');
  process.exit(1);
}
await import(entry.href);
