/**
 * Request metrics in the Prometheus text format, without a client library:
 * a counter per (route, status) and a latency histogram per route. Labels
 * are route templates, never raw paths, so cardinality stays bounded.
 */
import type { Metrics } from '../../core/ports.js';
import { chromiumProcesses, openFds } from './process.js';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

interface RouteSeries {
  readonly byStatus: Map<number, number>;
  readonly buckets: number[];
  count: number;
  sum: number;
}

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

export class PrometheusMetrics implements Metrics {
  private readonly routes = new Map<string, RouteSeries>();
  private readonly started = Date.now();

  observe(route: string, status: number, seconds: number): void {
    let s = this.routes.get(route);
    if (s === undefined) {
      s = { byStatus: new Map(), buckets: new Array(BUCKETS.length).fill(0), count: 0, sum: 0 };
      this.routes.set(route, s);
    }
    s.byStatus.set(status, (s.byStatus.get(status) ?? 0) + 1);
    s.count++;
    s.sum += seconds;
    for (let i = 0; i < BUCKETS.length; i++) {
      if (seconds <= BUCKETS[i]!) {
        s.buckets[i]!++;
        break;
      }
    }
  }

  render(): string {
    const out: string[] = [];
    out.push('# HELP scour_http_requests_total HTTP requests by route template and status.');
    out.push('# TYPE scour_http_requests_total counter');
    for (const [route, s] of this.routes) {
      for (const [status, n] of s.byStatus) out.push(`scour_http_requests_total{route="${esc(route)}",status="${status}"} ${n}`);
    }
    out.push('# HELP scour_http_request_duration_seconds HTTP request latency by route template.');
    out.push('# TYPE scour_http_request_duration_seconds histogram');
    for (const [route, s] of this.routes) {
      const r = esc(route);
      let cum = 0;
      for (let i = 0; i < BUCKETS.length; i++) {
        cum += s.buckets[i]!;
        out.push(`scour_http_request_duration_seconds_bucket{route="${r}",le="${BUCKETS[i]}"} ${cum}`);
      }
      out.push(`scour_http_request_duration_seconds_bucket{route="${r}",le="+Inf"} ${s.count}`);
      out.push(`scour_http_request_duration_seconds_sum{route="${r}"} ${s.sum}`);
      out.push(`scour_http_request_duration_seconds_count{route="${r}"} ${s.count}`);
    }
    const mem = process.memoryUsage();
    out.push('# HELP scour_process_resident_memory_bytes Resident set size.');
    out.push('# TYPE scour_process_resident_memory_bytes gauge');
    out.push(`scour_process_resident_memory_bytes ${mem.rss}`);
    const cpu = process.cpuUsage();
    out.push('# HELP scour_process_cpu_seconds_total User and system CPU time of this process.');
    out.push('# TYPE scour_process_cpu_seconds_total counter');
    out.push(`scour_process_cpu_seconds_total ${(cpu.user + cpu.system) / 1e6}`);
    out.push('# HELP scour_process_heap_used_bytes V8 heap in use.');
    out.push('# TYPE scour_process_heap_used_bytes gauge');
    out.push(`scour_process_heap_used_bytes ${mem.heapUsed}`);
    out.push('# HELP scour_process_open_fds Open file descriptors (-1: unknown on this system).');
    out.push('# TYPE scour_process_open_fds gauge');
    out.push(`scour_process_open_fds ${openFds()}`);
    out.push('# HELP scour_chromium_processes Chromium processes started by this process (-1: unknown on this system).');
    out.push('# TYPE scour_chromium_processes gauge');
    out.push(`scour_chromium_processes ${chromiumProcesses()}`);
    out.push('# HELP scour_process_uptime_seconds Seconds since the metrics registry was created.');
    out.push('# TYPE scour_process_uptime_seconds gauge');
    out.push(`scour_process_uptime_seconds ${(Date.now() - this.started) / 1000}`);
    return `${out.join('\n')}\n`;
  }
}
