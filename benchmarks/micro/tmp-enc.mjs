import { randomUUID } from 'node:crypto';
import hyperid from 'hyperid';
import uuidTool from '../../dist/plugins/tools/uuid-generator/index.js';
const id = hyperid({ urlSafe: true, fixedLength: true });
function bench(name, f, n = 1000000) { let x; for (let i = 0; i < 100000; i++) x = f(i); const t = performance.now(); for (let i = 0; i < n; i++) x = f(i); return [name, ((performance.now() - t) * 1e6 / n)]; }
const input = { version: 4, count: 1, format: 'standard' };
const rows = [];
for (let r = 0; r < 3; r++) {
  rows.push(bench('literal+const id', () => JSON.stringify({ uuids: [randomUUID()], version: 4, count: 1, format: 'standard', request_id: 'abcdefghijklmnopqrstuv-0000000001' })));
  rows.push(bench('literal+hyperid', () => JSON.stringify({ uuids: [randomUUID()], version: 4, count: 1, format: 'standard', request_id: id() })));
  rows.push(bench('tool+mutate+hyperid', () => { const o = uuidTool.run(input, {}); o.request_id = id(); return JSON.stringify(o); }));
  rows.push(bench('tool+spread+hyperid', () => { const o = uuidTool.run(input, {}); return JSON.stringify({ ...o, request_id: id() }); }));
  rows.push(bench('hyperid only', () => id()));
  rows.push(bench('randomUUID only', () => randomUUID()));
}
for (const [n, v] of rows) console.log(n.padEnd(24), v.toFixed(0));
