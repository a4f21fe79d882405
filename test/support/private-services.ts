/**
 * A PostgreSQL cluster and a Redis server of a suite's own, on loopback and
 * free ports, that the suite may stop and start at will (fault tests) while
 * every other suite keeps using the shared ones. PostgreSQL runs as the
 * `postgres` user (initdb refuses root) from Debian's binaries; a missing
 * binary fails the suite with the command that installs it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A free loopback port (closed again before it is returned). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

function pgBin(name: string): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort().reverse() : [];
  for (const v of versions) {
    const p = join(root, v, 'bin', name);
    if (existsSync(p)) return p;
  }
  throw new Error(`${name} not found under ${root}: apt-get install -y postgresql (bash scripts/test-services.sh does it)`);
}

/** Runs a command as `postgres` when we are root (initdb and postgres refuse root). */
function asPostgres(cmd: string, args: readonly string[]): { cmd: string; args: string[] } {
  return process.getuid?.() === 0 ? { cmd: 'runuser', args: ['-u', 'postgres', '--', cmd, ...args] } : { cmd, args: [...args] };
}

export interface PrivatePostgres {
  readonly url: string;
  readonly port: number;
  /** Stop at once (-m immediate: like a crash; clients see their connections die). */
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'scour-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const port = await freePort();
  if (process.getuid?.() === 0) spawnSync('chown', ['postgres', dir]);
  const init = asPostgres(pgBin('initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const r = spawnSync(init.cmd, init.args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`initdb failed: ${r.stderr || r.stdout}`);
  const ctl = (args: string[]) => {
    const c = asPostgres(pgBin('pg_ctl'), ['-D', data, ...args]);
    const out = spawnSync(c.cmd, c.args, { encoding: 'utf8', timeout: 60_000 });
    if (out.status !== 0) throw new Error(`pg_ctl ${args.join(' ')} failed: ${out.stderr || out.stdout}`);
  };
  const start = async () => {
    ctl(['-w', '-l', join(dir, 'log'), '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`, 'start']);
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start,
    async stop() {
      ctl(['-m', 'immediate', 'stop']);
    },
    async destroy() {
      try { ctl(['-m', 'immediate', 'stop']); } catch { /* already stopped */ }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface PrivateRedis {
  readonly url: string;
  readonly port: number;
  /** SIGKILL: like a crash. */
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no'], { stdio: 'ignore' });
    // Ready when it accepts a connection.
    for (let i = 0; i < 100; i++) {
      const ok = await new Promise<boolean>((resolve) => {
        const s = connect(port, '127.0.0.1', () => { s.end(); resolve(true); });
        s.once('error', () => resolve(false));
      });
      if (ok) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('redis-server did not start');
  };
  const stop = async () => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await gone;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, port, start, stop, destroy: stop };
}
