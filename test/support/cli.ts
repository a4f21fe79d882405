/** The real `scour` command, run from the TypeScript sources with tsx, for the CLI and multi-process suites. */
import { spawn } from 'node:child_process';
import { expect } from 'vitest';
import { join } from 'node:path';

export const TSX = join(process.cwd(), 'node_modules/.bin/tsx');
export const MAIN = join(process.cwd(), 'config/cli.ts');

/** A minimal environment: nothing from the test runner's own settings leaks into the child. */
export function baseEnv(extra: Record<string, string>): Record<string, string> {
  // No warm-up (SCOUR_WARMUP, on by default) unless a test asks for it: it loads Playwright, the citation
  // engine and the extraction workers (each through tsx here) before the server listens, which on a loaded
  // 2-core machine kept spawned servers from starting within their tests' deadlines; warm-up itself is
  // tested in test/http/warmup.test.ts.
  // Tests reach only loopback: no built-in provider that asks a public service (a test that wants one sets
  // SCOUR_SEARCH_PROVIDERS and points the provider's SCOUR_PROVIDER_<ID>_URL at a stand-in).
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SCOUR_WARMUP: 'false', SCOUR_SEARCH_PROVIDERS: 'local', ...extra };
}

export interface CliResult {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
}

/** Run one command to completion (with `stdin` written to it, else none); killed (and the promise rejected) after `timeoutMs`. */
export function runCli(args: readonly string[], env: Record<string, string>, cwd: string, timeoutMs = 45_000, stdin?: string): Promise<CliResult> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(TSX, [MAIN, ...args], { cwd, env: baseEnv(env), stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    if (stdin !== undefined) child.stdin!.end(stdin);
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (err += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`scour ${args.join(' ')} timed out\n${out}\n${err}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolveRun({ code, out, err });
    });
  });
}

/** Run tasks at most `width` at a time (each CLI run is a whole Node process). */
export async function pooled<T>(tasks: readonly (() => Promise<T>)[], width = 3): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, tasks.length) }, worker));
  return results;
}

/** The command succeeded: its stdout as JSON. */
export function okJson(r: CliResult): any {
  expect(r.code, `exit ${r.code}\nstdout:\n${r.out}\nstderr:\n${r.err}`).toBe(0);
  return JSON.parse(r.out);
}

/** A refused or malformed command: its exit code, a one-line reason, no stack trace. */
export function expectCliFailure(r: CliResult, code: 1 | 2, message: string | RegExp, label: string): void {
  expect(r.code, `${label}\nstdout:\n${r.out}\nstderr:\n${r.err}`).toBe(code);
  expect(r.out, label).toBe('');
  const first = r.err.split('\n')[0]!;
  expect(first.startsWith('scour: '), label).toBe(true);
  if (typeof message === 'string') expect(first, label).toContain(message);
  else expect(first, label).toMatch(message);
  expect(r.err, label).not.toMatch(/^\s+at /m);
}
