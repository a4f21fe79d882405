// Linux /proc readings for the scrape bench: the process tree under the
// Scour server (its Chromium pool included), their summed resident memory,
// and, after the server is gone, any Chromium process that belonged to it.
// Read from outside the server, so the figures do not depend on what the
// server says about itself.
import { readdirSync, readFileSync } from 'node:fs';

/** pid, ppid, state, start time (clock ticks since boot, tells a recycled pid apart) and argv of one process. */
export function readProc(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    let argv = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').filter((s) => s !== '');
    // Chromium's child processes rewrite their title: one string, arguments separated by spaces.
    if (argv.length === 1 && argv[0].includes(' ')) argv = argv[0].split(' ').filter((s) => s !== '');
    return { pid, ppid: Number(rest[1]), state: rest[0] ?? '?', start: rest[19] ?? '', argv, cmdline: argv.join(' ') };
  } catch {
    return undefined;
  }
}

/** Every live (non-zombie) process. */
export function allProcs() {
  const out = [];
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n)) continue;
    const p = readProc(Number(n));
    if (p && p.state !== 'Z') out.push(p);
  }
  return out;
}

/** `root` and all its descendants, from one snapshot. */
export function descendants(root, procs = allProcs()) {
  const children = new Map();
  for (const p of procs) {
    const list = children.get(p.ppid) ?? [];
    list.push(p);
    children.set(p.ppid, list);
  }
  const self = procs.find((p) => p.pid === root);
  const out = self ? [self] : [];
  const stack = [root];
  const seen = new Set([root]);
  while (stack.length > 0) {
    for (const c of children.get(stack.pop()) ?? []) {
      if (seen.has(c.pid)) continue;
      seen.add(c.pid);
      out.push(c);
      stack.push(c.pid);
    }
  }
  return out;
}

/** A Chromium process: the browser, its zygotes, renderers, GPU and utility processes, or its crash handler. */
export const isChromium = (p) => /(^|\/)(chromium|chrome|chrome_crashpad_handler|headless_shell)$/.test(p.argv[0] ?? '') || (p.argv[0] ?? '').startsWith('/usr/lib/chromium/');

/** The pool markers (`--scour-pool=<marker>`) seen on these processes' command lines. */
export function poolMarkers(procs) {
  const out = new Set();
  for (const p of procs) {
    for (const a of p.argv) {
      const m = /^--scour-pool=(.+)$/.exec(a);
      if (m) out.add(m[1]);
    }
  }
  return out;
}

/** VmRSS of one process in bytes (0 when gone). */
export function rssBytes(pid) {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Proportional set size of one process in bytes (shared pages divided among their sharers; 0 when gone). */
export function pssBytes(pid) {
  try {
    const m = /^Pss:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'latin1'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * The server's processes: its tree, plus the processes outside it that carry
 * one of its pool markers (Chromium's crash handler daemonises out of the
 * tree but names its dump directory, which contains the marker).
 */
export function serverProcesses(serverPid, markers, extraNeedles = []) {
  const procs = allProcs();
  const tree = descendants(serverPid, procs);
  for (const m of poolMarkers(tree)) markers.add(m);
  const inTree = new Set(tree.map((p) => p.pid));
  const needles = [...markers, ...extraNeedles];
  const outside = procs.filter((p) => !inTree.has(p.pid) && needles.some((n) => p.cmdline.includes(n)));
  return { tree, outside, all: [...tree, ...outside] };
}

/** Summary of Chromium processes by kind (browser, renderer, zygote, gpu-process, utility, crashpad-handler). */
export function chromiumKinds(procs) {
  const kinds = {};
  for (const p of procs.filter(isChromium)) {
    const type = /crashpad/.test(p.argv[0] ?? '') ? 'crashpad-handler' : (p.argv.find((a) => a.startsWith('--type='))?.slice(7) ?? 'browser');
    kinds[type] = (kinds[type] ?? 0) + 1;
  }
  return kinds;
}
