/**
 * Real `scour serve` and `scour worker` processes for the multi-process
 * suites: started from the TypeScript sources with tsx, on loopback, and
 * ready once their start-up log line says so.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { baseEnv, MAIN } from './cli.js';

/** tsx's loader, by absolute URL: the children run in temporary directories. */
const TSX_LOADER = pathToFileURL(join(process.cwd(), 'node_modules/tsx/dist/loader.mjs')).href;

export interface ScourProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** The API's base URL (serve); '' for a worker. */
  readonly url: string;
  /** A worker's id (`host:pid:random`, as stored on the jobs it holds); '' for serve. */
  readonly workerId: string;
  readonly exited: Promise<number | null>;
  out(): string;
  err(): string;
}

/** Start `scour serve` (ready at its "listening" line) or `scour worker` (ready at its worker line). */
export async function startProcess(
  name: string, command: 'serve' | 'worker', env: Record<string, string>, cwd: string, children: ChildProcess[], timeoutMs = 60_000,
): Promise<ScourProcess> {
  // Node itself with tsx's loader, not the tsx command: that one runs Node in a child process, which a
  // SIGKILL of the command would leave running. Killing `child` must kill the server.
  const child = spawn(process.execPath, ['--import', TSX_LOADER, MAIN, command], { cwd, env: baseEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  let dead = false;
  void exited.then(() => (dead = true));
  const deadline = Date.now() + timeoutMs;
  const ready = () => (command === 'serve' ? /"url":"(http:[^"]+)"/.exec(out)?.[1] : /"worker":"([^"]+)"/.exec(out)?.[1]);
  let found: string | undefined;
  while (!found && !dead && Date.now() < deadline) {
    found = ready();
    if (!found) await new Promise((r) => setTimeout(r, 50));
  }
  if (!found) throw new Error(`${name} did not start\nstdout:\n${out}\nstderr:\n${err}`);
  return { name, child, url: command === 'serve' ? found : '', workerId: command === 'worker' ? found : '', exited, out: () => out, err: () => err };
}

/** True while a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pid inside a worker id (`host:pid:random`). */
export const workerPid = (workerId: string): number => Number(workerId.split(':').at(-2));

/** SIGKILL every child still alive and wait for them to go. */
export async function killAll(children: readonly ChildProcess[]): Promise<void> {
  for (const c of children) {
    if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }
  await Promise.all(children.map((c) => (c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : undefined)));
}

/** One JSON call: GET, or POST when there is a body (the body's text is kept when it is not JSON, for failure messages). */
export async function call(url: string, init: { method?: string; token?: string; body?: unknown } = {}): Promise<{ status: number; headers: Headers; body: any }> {
  const headers: Record<string, string> = {};
  if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method: init.method ?? (init.body === undefined ? 'GET' : 'POST'), headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // keep the text for the failure message
  }
  return { status: res.status, headers: res.headers, body };
}

/** Poll `f` until `ok` holds; throws with the last value after `timeoutMs`. */
export async function until<T>(f: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000, everyMs = 100): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`condition not met in ${timeoutMs} ms: ${JSON.stringify(v).slice(0, 800)}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
