/**
 * Which Chromium processes belong to one pool (Linux /proc): the browser
 * processes carry a unique marker switch on their command line, and every
 * descendant of one of them (zygotes, renderers, GPU and utility processes)
 * belongs to it too. Used to report pids and to make sure none survives
 * stop(), whatever the driver did.
 */
import { readdirSync, readFileSync } from 'node:fs';

interface Proc {
  readonly pid: number;
  readonly ppid: number;
  readonly state: string;
  readonly cmdline: string;
}

function readProc(pid: number): Proc | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // The command name is in parentheses and may itself contain ") ".
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'latin1').replace(/\0/g, ' ');
    return { pid, ppid: Number(rest[1]), state: rest[0] ?? '?', cmdline };
  } catch {
    return undefined;
  }
}

function allProcs(): Proc[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: Proc[] = [];
  for (const n of names) {
    if (!/^\d+$/.test(n)) continue;
    const p = readProc(Number(n));
    if (p) out.push(p);
  }
  return out;
}

/** Live (non-zombie) pids of the processes whose command line has `marker`, and all their descendants. */
export function processTree(marker: string): number[] {
  const procs = allProcs().filter((p) => p.state !== 'Z');
  const children = new Map<number, number[]>();
  for (const p of procs) {
    const list = children.get(p.ppid) ?? [];
    list.push(p.pid);
    children.set(p.ppid, list);
  }
  const found = new Set<number>();
  const stack = procs.filter((p) => p.cmdline.includes(marker)).map((p) => p.pid);
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    if (found.has(pid)) continue;
    found.add(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return [...found].sort((a, b) => a - b);
}

/** Whether `pid` is running and its command line still has one of `needles` (a recycled pid is left alone). */
export function looksLike(pid: number, needles: readonly string[]): boolean {
  const p = readProc(pid);
  return p !== undefined && p.state !== 'Z' && needles.some((n) => p.cmdline.includes(n));
}
