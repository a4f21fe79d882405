/**
 * scour/client as a package: its generated types match the server's schemas
 * (the committed adapters/client/types.gen.ts is what the generator makes
 * from the current routes), and a consumer outside the sources imports
 * `scour/client` through the package's `exports`, type-checks against the
 * declarations in dist/ and calls a real server with it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateClientTypes, TYPES_FILE } from '../../scripts/gen-client-types.js';
import { startScour, type Running } from '../support/server.js';

const run = promisify(execFile);

describe('scour/client types', () => {
  it('the committed types are what the server\'s schemas generate (else run npm run gen:client)', async () => {
    const fresh = await generateClientTypes();
    const committed = readFileSync(TYPES_FILE, 'utf8');
    // A mismatch names the first differing line, not a 2,000-line diff.
    const a = fresh.split('\n');
    const b = committed.split('\n');
    const i = a.findIndex((line, n) => line !== b[n]);
    expect(i === -1 && a.length === b.length ? 'same' : `line ${i + 1}: generated ${JSON.stringify(a[i])}, committed ${JSON.stringify(b[i])}; run npm run gen:client`).toBe('same');
    // Every operation and all eleven tools are typed.
    for (const name of ['SearchRequest', 'ScrapeResponse', 'BulkScrapeJob', 'CrawlJob', 'ResearchJob', 'UsageResponse', 'UuidGeneratorToolRequest', 'JwtDecoderToolResponse']) {
      expect(committed).toContain(`export interface ${name} `);
    }
    expect(committed.match(/ToolRequest \{/g)).toHaveLength(11);
  }, 60_000);
});

describe('scour/client as a package consumer sees it', () => {
  let server: Running;
  let dir: string;
  beforeAll(async () => {
    // dist/adapters/client from the current sources (what `npm run build` ships: JS and declarations).
    await run(join(process.cwd(), 'node_modules/.bin/tsc'), ['-p', 'tsconfig.client.json']);
    server = await startScour('uws');
    // Inside the package directory, so `scour/client` resolves through package.json's exports (self-reference).
    dir = mkdtempSync(join(process.cwd(), '.client-consumer-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await server?.stop();
  });

  it('imports scour/client from dist (ESM), type-checks against dist/*.d.ts, and calls the server', async () => {
    const source = `import { Scour, ScourError, TOOL_SLUGS, type UuidGeneratorToolResponse } from 'scour/client';
const client = new Scour({ baseUrl: process.argv[2] });
const out: UuidGeneratorToolResponse = await client.tools['uuid-generator']({ count: 2 });
let refused = '';
try { await client.usage(); } catch (e) { if (e instanceof ScourError) refused = e.code; }
console.log(JSON.stringify({ uuids: out.uuids.length, refused, tools: TOOL_SLUGS.length }));
`;
    writeFileSync(join(dir, 'consumer.mts'), source);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, rootDir: '.', outDir: 'out', types: ['node'], lib: ['ES2023', 'DOM'], skipLibCheck: false, typeRoots: [join(process.cwd(), 'node_modules/@types')] },
      files: ['consumer.mts'],
    }));
    const tsc = join(process.cwd(), 'node_modules/.bin/tsc');
    // The declarations the package ships are complete: skipLibCheck is off, and nothing outside dist/ is read for them.
    const checked = await run(tsc, ['-p', dir, '--listFiles'], { cwd: dir }).catch((e: { stdout: string; stderr: string }) => e);
    expect(`${checked.stdout}${checked.stderr}`).not.toMatch(/error TS/);
    const files = checked.stdout.split('\n').filter((f) => f.includes('/adapters/client/'));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(f).toMatch(/\/dist\/adapters\/client\/[a-z.]+\.d\.ts$/);
    // A typo in a tool's body is caught by the shipped types.
    writeFileSync(join(dir, 'consumer.mts'), source.replace("({ count: 2 })", "({ count: 'two' })"));
    const bad = await run(tsc, ['-p', dir], { cwd: dir }).then(() => 'compiled', (e: { stdout: string }) => e.stdout);
    expect(bad).toMatch(/error TS2322/);
    writeFileSync(join(dir, 'consumer.mts'), source);
    await run(tsc, ['-p', dir], { cwd: dir });
    const { stdout } = await run(process.execPath, [join(dir, 'out/consumer.mjs'), server.url], { cwd: dir });
    expect(JSON.parse(stdout)).toEqual({ uuids: 2, refused: 'UNAUTHORIZED', tools: 11 });
  }, 120_000);

  it('the client example of docs/clients.md type-checks against the shipped declarations', async () => {
    const readme = readFileSync(join(process.cwd(), 'docs/clients.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## TypeScript client'));
    const example = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(example).toContain("from 'scour/client'");
    writeFileSync(join(dir, 'consumer.mts'), `${example}\nexport {};\n`);
    const checked = await run(join(process.cwd(), 'node_modules/.bin/tsc'), ['-p', dir, '--noEmit'], { cwd: dir }).then(() => '', (e: { stdout: string }) => e.stdout);
    expect(checked).toBe('');
  }, 60_000);
});
