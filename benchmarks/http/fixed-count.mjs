// A fixed number of keep-alive requests for instruction counting (instructions.sh):
// CONNECTIONS raw sockets, each sending the next POST of `{}` as soon as the previous
// answer arrived. Prints {"done", "bad" (answers other than 200), "ms"} as JSON.
// Usage: node benchmarks/http/fixed-count.mjs PORT COUNT [CONNECTIONS] [PATH]
import net from 'node:net';

const [port, total, conns = '20', path = '/v1/tools/uuid-generator'] = process.argv.slice(2);
const N = Number(total);
const C = Number(conns);
const request = Buffer.from(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: 2\r\nContent-Type: application/json\r\n\r\n{}`);
let sent = 0;
let done = 0;
let bad = 0;
const t0 = Date.now();
await new Promise((resolve) => {
  for (let i = 0; i < C; i++) {
    const s = net.connect(Number(port), '127.0.0.1');
    let tail = '';
    s.setNoDelay(true);
    const next = () => {
      if (sent < N) {
        sent++;
        s.write(request);
      } else s.end();
    };
    s.on('connect', next);
    s.on('data', (d) => {
      // Count status lines (no body holds one); `tail` keeps a status line cut between two reads.
      const text = tail + d.toString('latin1');
      let at = 0;
      let k;
      while ((k = text.indexOf('HTTP/1.1 ', at)) !== -1) {
        if (!text.startsWith('HTTP/1.1 200', k)) bad++;
        done++;
        at = k + 9;
        next();
      }
      tail = text.slice(Math.max(at, text.length - 8));
      if (done >= N) resolve();
    });
    s.on('error', (e) => console.error(e.message));
  }
});
console.log(JSON.stringify({ done, bad, ms: Date.now() - t0 }));
process.exit(0);
