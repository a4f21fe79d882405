/** Runs every tool's case table in process (the HTTP contract suite runs the same tables over both adapters). */
/// <reference types="vite/client" />
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinTools } from '../../plugins/tools/index.js';
import { AjvSchemaCompiler } from '../../adapters/validation/json-schema.js';
import { runTool, type ToolCaseFile } from '../support/tool-harness.js';

const compiler = new AjvSchemaCompiler();

const files = import.meta.glob<ToolCaseFile>('./cases/*.ts', { eager: true, import: 'default' });

describe.each(builtinTools.map((t) => [t.slug, t] as const))('tool %s', (slug, tool) => {
  const file = Object.values(files).find((f) => f.slug === slug);
  beforeAll(async () => { await tool.start?.(); });
  afterAll(async () => { await tool.stop?.(); });

  it('has a case table with successes and hostile inputs', () => {
    expect(file, `test/tools/cases/${slug}.ts is missing`).toBeDefined();
    expect(file!.cases.filter((c) => c.status === 200).length).toBeGreaterThan(0);
    expect(file!.cases.filter((c) => c.status === 400).length).toBeGreaterThan(2);
  });

  it.each((file?.cases ?? []).map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const res = await runTool(tool, c.body);
    expect(res.status, JSON.stringify(res.body)).toBe(c.status);
    if (c.status === 400) {
      expect(Array.isArray(res.body.validation_errors)).toBe(true);
      expect(res.body.validation_errors.length).toBeGreaterThan(0);
      for (const f of c.fields ?? []) {
        expect(res.body.validation_errors.map((e: { field: string }) => e.field)).toContain(f);
      }
    }
    c.check?.(res.body);
    if (res.status === 200) {
      // The serializer compiled from the response schema must answer exactly what JSON.stringify would:
      // nothing dropped, renamed or coerced (it proves the response schema matches the result).
      const serialize = compiler.compileStrictSerializer(tool.response);
      expect(JSON.parse(serialize(res.body))).toEqual(JSON.parse(JSON.stringify(res.body)));
    }
  });
});
