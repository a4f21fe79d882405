/**
 * What a load test watches on the server, read from Linux's /proc: open
 * file descriptors, and the Chromium processes descended from this one
 * (browser, zygotes, renderers). Elsewhere both read as -1 (unknown).
 */
import { readdirSync, readFileSync } from 'node:fs';

export function openFds(): number {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return -1;
  }
}

/** Pids of the Chromium processes whose ancestry leads to `root` (default: this process); undefined without /proc. */
export function chromiumDescendants(root: number = process.pid): number[] | undefined {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const parent = new Map<number, number>();
  const chrome: number[] = [];
  for (const n of names) {
    if (!/^\d+$/.test(n)) continue;
    const pid = Number(n);
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const rest = stat.slice(close + 2).split(' ');
      if (rest[0] === 'Z') continue; // a zombie is gone, whatever its entry says
      parent.set(pid, Number(rest[1]));
      if (/chrom/i.test(comm)) chrome.push(pid);
    } catch {
      // Exited while we looked.
    }
  }
  return chrome.filter((pid) => {
    for (let p = parent.get(pid), hops = 0; p !== undefined && p > 1 && hops < 64; p = parent.get(p), hops++) if (p === root) return true;
    return false;
  });
}

/** Chromium processes descended from this process; -1 without /proc. */
export function chromiumProcesses(): number {
  return chromiumDescendants()?.length ?? -1;
}
