/**
 * Where a worker thread's code is, for `new Worker(entry.source, { eval:
 * entry.eval })`: once compiled, the `.js` module beside the caller; from
 * the TypeScript sources (tests, `tsx`), a small script that registers tsx in
 * the new thread and then imports the `.ts` module. The one copy of this for
 * every pool and thread (extraction-pool/pool.ts, search-index/analysis-pool.ts,
 * search-index/sqlite-writer-thread.ts).
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

export interface WorkerEntry {
  readonly source: string | URL;
  readonly eval: boolean;
}

/**
 * `callerUrl`: the caller's `import.meta.url`; `module`: the worker's module
 * beside it, without extension (`./worker`).
 */
export function workerEntry(callerUrl: string, module: string): WorkerEntry {
  if (callerUrl.endsWith('.js')) return { source: new URL(`${module}.js`, callerUrl), eval: false };
  const require = createRequire(callerUrl);
  const api = pathToFileURL(require.resolve('tsx/esm/api')).href.replace(/\.cjs$/, '.mjs');
  const worker = new URL(`${module}.ts`, callerUrl).href;
  return { source: `import(${JSON.stringify(api)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(worker)}); });`, eval: true };
}
