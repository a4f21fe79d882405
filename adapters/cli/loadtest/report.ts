/**
 * What `scour loadtest` prints and writes: a table for the terminal, the
 * JSON document, and a self-contained HTML page (inline SVG charts, no
 * script, no external file) that opens offline.
 */
import type { LoadResult, Percentiles } from './engine.js';
import type { ServerSample } from './sampler.js';
import { slope } from './sampler.js';

export interface LoadReport {
  readonly scenario: string;
  readonly url: string;
  readonly startedAt: string;
  readonly result: LoadResult;
  readonly server: readonly ServerSample[];
  readonly summary: {
    /** RSS growth after the first fifth of the run, MiB per minute (least squares). */
    readonly rssSlopeMiBPerMin: number;
    readonly rssMaxMiB: number;
    readonly fdsFirst: number;
    readonly fdsMax: number;
    readonly fdsLast: number;
    readonly chromiumMax: number;
    readonly cpuMeanCores: number;
  };
}

export function summarise(server: readonly ServerSample[]): LoadReport['summary'] {
  const ok = server.filter((s) => s.rssBytes > 0);
  const after = ok.filter((s) => s.t >= (ok.at(-1)?.t ?? 0) / 5);
  const mib = (b: number) => Math.round((b / 1048576) * 10) / 10;
  const fds = ok.map((s) => s.openFds).filter((x) => x >= 0);
  return {
    rssSlopeMiBPerMin: Math.round(slope(after.map((s) => ({ x: s.t / 60, y: s.rssBytes / 1048576 }))) * 100) / 100,
    rssMaxMiB: mib(Math.max(0, ...ok.map((s) => s.rssBytes))),
    fdsFirst: fds[0] ?? -1,
    fdsMax: fds.length ? Math.max(...fds) : -1,
    fdsLast: fds.at(-1) ?? -1,
    chromiumMax: Math.max(-1, ...ok.map((s) => s.chromium)),
    cpuMeanCores: ok.length > 1 ? Math.round((ok.slice(1).reduce((n, s) => n + s.cpu, 0) / (ok.length - 1)) * 100) / 100 : 0,
  };
}

const pad = (s: string, n: number) => (s.length >= n ? s : s + ' '.repeat(n - s.length));
const lpad = (s: string, n: number) => (s.length >= n ? s : ' '.repeat(n - s.length) + s);

function row(label: string, p: Percentiles): string {
  return `${pad(label, 16)}${lpad(String(p.count), 9)}${[p.p50, p.p90, p.p99, p.p999, p.max].map((v) => lpad(v.toFixed(2), 10)).join('')}`;
}

export function textReport(r: LoadReport): string {
  const x = r.result;
  const mode = x.mode.kind === 'open' ? `open loop at ${x.mode.rate} req/s` : `closed loop, ${x.mode.connections} connections`;
  const lines = [
    `scour loadtest ${r.scenario} against ${r.url}: ${mode}, ${(x.elapsedMs / 1000).toFixed(1)} s`,
    '',
    `throughput ${x.throughput} req/s; sent ${x.sent}, answered ${x.completed}${x.dropped ? `, dropped by the generator ${x.dropped}` : ''}`,
    `status: 2xx ${x.classes['2xx']}, 4xx ${x.classes['4xx']}, 429 ${x.classes['429']}, 5xx ${x.classes['5xx']}, errors ${x.classes.errors}`
      + (Object.keys(x.errors).length ? ` (${Object.entries(x.errors).map(([k, v]) => `${k} ${v}`).join(', ')})` : ''),
    '',
    `${pad('latency (ms)', 16)}${lpad('count', 9)}${['p50', 'p90', 'p99', 'p99.9', 'max'].map((h) => lpad(h, 10)).join('')}`,
    row('all', x.latency),
    ...Object.entries(x.byTag).sort().map(([tag, t]) => row(tag, t.latency)),
    ...(Object.keys(x.byTag).length > 1 ? Object.entries(x.groups).map(([g, v]) => row(g, v.latency)) : []),
    ...(x.mode.kind === 'open' ? [`generator send lag p99 ${x.sendLag.p99} ms, max ${x.sendLag.max} ms (how late this generator itself sent; counted in the latency above)`] : []),
    '',
    `server: RSS max ${r.summary.rssMaxMiB} MiB, slope ${r.summary.rssSlopeMiBPerMin} MiB/min after warm-up; CPU ${r.summary.cpuMeanCores} cores on average;`
      + ` open fds ${r.summary.fdsFirst} -> ${r.summary.fdsLast} (max ${r.summary.fdsMax}); Chromium processes max ${r.summary.chromiumMax}`,
  ];
  return `${lines.join('\n')}\n`;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A line chart as inline SVG: one or more series over the same x. */
function chart(title: string, unit: string, xs: readonly number[], series: readonly { name: string; color: string; ys: readonly number[] }[]): string {
  const W = 720;
  const H = 220;
  const L = 56;
  const B = 28;
  const maxX = Math.max(1, ...xs);
  const maxY = Math.max(1e-9, ...series.flatMap((s) => s.ys));
  const px = (x: number) => L + (x / maxX) * (W - L - 10);
  const py = (y: number) => H - B - (y / maxY) * (H - B - 20);
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * maxY);
  const fmt = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
  return `<figure><figcaption>${esc(title)}</figcaption><svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="${esc(title)}">
${ticks.map((t) => `<line x1="${L}" x2="${W - 10}" y1="${py(t)}" y2="${py(t)}" class="grid"/><text x="${L - 6}" y="${py(t) + 4}" text-anchor="end">${fmt(t)}</text>`).join('\n')}
<text x="${L}" y="12">${esc(unit)}</text><text x="${W - 10}" y="${H - 6}" text-anchor="end">seconds</text>
${series.map((s) => `<polyline fill="none" stroke="${s.color}" stroke-width="1.6" points="${s.ys.map((y, i) => `${px(xs[i] ?? 0).toFixed(1)},${py(y).toFixed(1)}`).join(' ')}"/>`).join('\n')}
</svg><p class="legend">${series.map((s) => `<span style="color:${s.color}">■</span> ${esc(s.name)}`).join(' &nbsp; ')}</p></figure>`;
}

/** `preface`: HTML put before the report (a summary of several runs, say). */
export function htmlReport(r: LoadReport, preface = ''): string {
  const x = r.result;
  const secs = x.perSecond.map((s) => s.t);
  const table = (p: Percentiles, label: string) => `<tr><th>${esc(label)}</th><td>${p.count}</td>${[p.p50, p.p90, p.p99, p.p999, p.max].map((v) => `<td>${v.toFixed(2)}</td>`).join('')}</tr>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>scour loadtest ${esc(r.scenario)}</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:2rem;max-width:60rem;color:#222}table{border-collapse:collapse}td,th{padding:.2rem .6rem;text-align:right;border-bottom:1px solid #ddd}th:first-child{text-align:left}figure{margin:1.5rem 0}figcaption{font-weight:600}svg text{font-size:11px;fill:#555}.grid{stroke:#eee}.legend{margin:.2rem 0 0 3.5rem}</style>
</head><body>${preface}<h1>scour loadtest: ${esc(r.scenario)}</h1>
<p>${esc(r.url)}, started ${esc(r.startedAt)}; ${x.mode.kind === 'open' ? `open loop at ${x.mode.rate} req/s` : `closed loop, ${x.mode.connections} connections`}, ${(x.elapsedMs / 1000).toFixed(1)} s.
Throughput <b>${x.throughput} req/s</b>; sent ${x.sent}, answered ${x.completed}, dropped ${x.dropped}.
2xx ${x.classes['2xx']}, 4xx ${x.classes['4xx']}, 429 ${x.classes['429']}, 5xx ${x.classes['5xx']}, errors ${x.classes.errors}.</p>
<table><thead><tr><th>latency (ms)</th><th>count</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th></tr></thead><tbody>
${table(x.latency, 'all')}${Object.entries(x.byTag).sort().map(([t, v]) => table(v.latency, t)).join('')}${Object.keys(x.byTag).length > 1 ? Object.entries(x.groups).map(([g, v]) => table(v.latency, g)).join('') : ''}</tbody></table>
${chart('Latency over time', 'ms', secs, [
    { name: 'p50', color: '#1f77b4', ys: x.perSecond.map((s) => s.p50) },
    { name: 'p99', color: '#d62728', ys: x.perSecond.map((s) => s.p99) },
  ])}
${chart('Throughput', 'answers per second', secs, [
    { name: 'answered', color: '#2ca02c', ys: x.perSecond.map((s) => s.completed) },
    { name: 'non-2xx', color: '#ff7f0e', ys: x.perSecond.map((s) => s.non2xx) },
  ])}
${chart('Server resident memory', 'MiB', r.server.map((s) => s.t), [{ name: 'RSS', color: '#9467bd', ys: r.server.map((s) => s.rssBytes / 1048576) }])}
${chart('Server CPU', 'cores', r.server.map((s) => s.t), [{ name: 'CPU', color: '#8c564b', ys: r.server.map((s) => s.cpu) }])}
<p>Server: RSS max ${r.summary.rssMaxMiB} MiB, slope ${r.summary.rssSlopeMiBPerMin} MiB/min after warm-up; open fds ${r.summary.fdsFirst} to ${r.summary.fdsLast} (max ${r.summary.fdsMax}); Chromium processes at most ${r.summary.chromiumMax}.</p>
</body></html>
`;
}
