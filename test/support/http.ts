/**
 * One HTTP call for the contract suites, and the checks every error body
 * gets (spec error body: error, code, request_id = x-request-id, timestamp).
 */
import { expect } from 'vitest';

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** `body` a string: sent as is (malformed JSON); undefined: no body at all. */
export async function call(url: string, method: string, opts: { auth?: string | undefined; body?: unknown; signal?: AbortSignal } = {}): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (opts.auth !== undefined) headers.authorization = opts.auth;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, {
    method,
    headers,
    ...(opts.body === undefined ? {} : { body: typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body) }),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // keep the text
  }
  return { status: res.status, headers: res.headers, text, body };
}

export function expectErrorBody(r: Reply, status: number, code: string): void {
  expect(r.status, r.text).toBe(status);
  expect(typeof r.body.error).toBe('string');
  expect(r.body.error.length).toBeGreaterThan(0);
  expect(r.body.code).toBe(code);
  expect(typeof r.body.request_id).toBe('string');
  expect(r.body.request_id).toBe(r.headers.get('x-request-id'));
  expect(r.body.timestamp).toMatch(ISO);
  expect(Math.abs(Date.parse(r.body.timestamp) - Date.now())).toBeLessThan(60_000);
}
