/**
 * Runs a tool plugin in process the way the HTTP layer does: validate the
 * body against the compiled request schema (400 + validation_errors), run
 * the tool, map a thrown BadRequest to 400. The same case tables also run
 * over HTTP against both adapters (test/http/tools-contract.test.ts).
 */
import { AjvSchemaCompiler } from '../../adapters/validation/json-schema.js';
import { BadRequest, type FieldIssue } from '../../core/errors.js';
import type { ToolPlugin } from '../../core/plugin.js';

export interface ToolCase {
  readonly name: string;
  /** The JSON request body. */
  readonly body: unknown;
  readonly status: 200 | 400;
  /** For 400: fields that must appear in validation_errors. */
  readonly fields?: readonly string[];
  /** For 200 (or 400): further assertions on the response body (use vitest's expect). */
  readonly check?: (body: any) => void;
}

export interface ToolCaseFile {
  readonly slug: string;
  readonly cases: readonly ToolCase[];
}

const compiler = new AjvSchemaCompiler();
const validators = new WeakMap<ToolPlugin, ReturnType<AjvSchemaCompiler['compile']>>();

export async function runTool(tool: ToolPlugin, body: unknown): Promise<{ status: number; body: any }> {
  let validate = validators.get(tool);
  if (!validate) {
    validate = compiler.compile(tool.request);
    validators.set(tool, validate);
  }
  const input = structuredClone(body ?? {});
  const v = validate(input);
  if (!v.ok) return { status: 400, body: { code: 'MISSING_PARAMETER', validation_errors: v.issues } };
  try {
    const out = await tool.run(v.value, { requestId: 'test', clientIp: '127.0.0.1' });
    return { status: 200, body: out };
  } catch (e) {
    if (e instanceof BadRequest) {
      return { status: 400, body: { code: e.code, error: e.message, validation_errors: e.validationErrors as FieldIssue[] } };
    }
    throw e;
  }
}
