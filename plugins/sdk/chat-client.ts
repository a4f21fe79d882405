/**
 * A minimal client for the OpenAI-compatible Chat Completions wire format
 * (OpenAI, Azure's /openai/v1, vLLM, llama.cpp's server, Ollama, LiteLLM,
 * LocalAI, ...): one non-streaming exchange.
 *
 *   POST {baseUrl}/chat/completions
 *   Authorization: Bearer {apiKey}            (only when a key is given)
 *   { "model", "messages": [{ "role", "content" }], "temperature": 0,
 *     "max_tokens", "response_format": { "type": "json_object" }? }
 *
 * The reply is `{ "choices": [{ "message": { "role", "content" }, "finish_reason" }], ... }`;
 * the text is `choices[0].message.content`. A failure is a non-2xx status
 * with `{ "error": { "message", "type", "param", "code" } }`. `max_tokens` is
 * sent rather than `max_completion_tokens` because every compatible server
 * understands it.
 *
 * Why not the egress guard (adapters/egress): the endpoint is operator
 * configuration (LLM_BASE_URL), not a URL from a request, and is typically a
 * model server on loopback or a private address, which the guard refuses by
 * design. So it is reached with Node's own fetch (undici), like the database
 * or Redis. What still holds: http(s) only, no credentials in the URL, no
 * redirects followed (the bearer key never travels to another origin), one
 * deadline over the whole exchange (AbortSignal.timeout, combined with the
 * caller's signal), and the response read under a byte budget (1 MB by
 * default) whatever Content-Length says.
 *
 * Errors are LlmError with a `kind`; their messages are short, single-line
 * and never contain the key.
 */

export type ChatRole = 'system' | 'user' | 'assistant';

export interface ChatMessage {
  readonly role: ChatRole;
  readonly content: string;
}

export interface ChatClientOptions {
  /** e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`; `/chat/completions` is appended. */
  readonly baseUrl: string;
  readonly apiKey?: string | undefined;
  /** The whole exchange (connect, wait, read the body). */
  readonly timeoutMs: number;
  /** Largest response body read; more is a `too_large` failure. Default 1 MiB. */
  readonly maxResponseBytes?: number;
  /** For tests; default the global fetch (undici). */
  readonly fetch?: typeof fetch;
}

export interface ChatRequest {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly maxTokens: number;
  /** Ask for JSON mode (`response_format: { type: 'json_object' }`); the messages must say JSON too. */
  readonly json?: boolean;
  /** Default 0. */
  readonly temperature?: number;
  /** The caller's own cancellation (e.g. the request's deadline). */
  readonly signal?: AbortSignal;
}

export interface ChatReply {
  readonly content: string;
  /** `stop`, `length` (cut at max_tokens), `content_filter`, ... or null. */
  readonly finishReason: string | null;
  /** The model the server says answered. */
  readonly model: string | null;
  readonly usage: { readonly promptTokens: number; readonly completionTokens: number } | null;
}

export type LlmErrorKind =
  | 'http' // non-2xx, or an error body
  | 'timeout' // timeoutMs passed
  | 'aborted' // the caller's signal
  | 'network' // connection refused, reset, DNS
  | 'too_large' // the body went over maxResponseBytes
  | 'malformed' // not JSON, or not the chat completion shape
  | 'empty'; // no text in choices[0].message.content (refusal, tool call, null)

export class LlmError extends Error {
  override readonly name = 'LlmError';
  constructor(
    readonly kind: LlmErrorKind,
    message: string,
    readonly details: { readonly status?: number; readonly type?: string; readonly code?: string; readonly retryAfter?: string } = {},
  ) {
    super(message);
  }
}

export interface ChatClient {
  /** `{baseUrl}/chat/completions`. */
  readonly url: string;
  complete(request: ChatRequest): Promise<ChatReply>;
}

export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

/** One line, printable, at most `n` characters: for text from the server that ends up in warnings and logs. */
export function clip(text: string, n = 300): string {
  // eslint-disable-next-line no-control-regex
  const one = text.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]+/g, ' ').replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
}

/** The chat completions URL of a base URL; throws on anything but an absolute http(s) URL without credentials, query or fragment. */
export function chatCompletionsUrl(baseUrl: string): string {
  let u: URL;
  try {
    u = new URL(baseUrl.trim());
  } catch {
    throw new Error(`LLM base URL is not an absolute URL: ${JSON.stringify(clip(baseUrl, 200))}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`LLM base URL must be http or https (got ${u.protocol})`);
  if (u.username !== '' || u.password !== '') throw new Error('LLM base URL must not contain credentials (use the API key setting)');
  if (u.search !== '' || u.hash !== '') throw new Error('LLM base URL must not have a query or fragment');
  return `${u.origin}${u.pathname.replace(/(?<!\/)\/+$/, '')}/chat/completions`;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);

/** The OpenAI error body's parts, if the body is one. */
function errorBody(text: string): { message?: string; type?: string; code?: string } | undefined {
  let body: unknown;
  try { body = JSON.parse(text); } catch { return undefined; }
  if (!isRecord(body)) return undefined;
  const e = body.error;
  // { error: { message, type, code } }; some servers send { error: "text" } or { message }.
  if (isRecord(e)) return { message: str(e.message), type: str(e.type), code: str(e.code) };
  if (typeof e === 'string') return { message: e };
  if (typeof body.message === 'string' && body.choices === undefined) return { message: body.message };
  return undefined;
}

/** Read a body under a byte budget (the stream is cancelled as soon as it goes over). */
async function readCapped(res: Response, max: number): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel().catch(() => undefined);
    throw new LlmError('too_large', `response of ${declared} bytes is over the ${max}-byte limit`);
  }
  if (res.body === null) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      throw new LlmError('too_large', `response is over the ${max}-byte limit`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

function parseReply(text: string): ChatReply {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new LlmError('malformed', `response is not JSON: ${JSON.stringify(clip(text, 80))}`);
  }
  if (!isRecord(body)) throw new LlmError('malformed', 'response is not a JSON object');
  if (body.choices === undefined && body.error !== undefined) {
    // An error body with a 2xx status (some proxies do this).
    const e = errorBody(text) ?? {};
    throw new LlmError('http', `error in a 2xx response: ${clip(e.message ?? 'no message', 300)}`, { ...(e.type ? { type: clip(e.type, 60) } : {}), ...(e.code ? { code: clip(e.code, 60) } : {}) });
  }
  if (!Array.isArray(body.choices)) throw new LlmError('malformed', 'response has no choices array');
  const choice = body.choices[0];
  if (!isRecord(choice)) throw new LlmError('malformed', 'response has no choices[0]');
  const message = choice.message;
  if (!isRecord(message)) throw new LlmError('malformed', 'choices[0] has no message');
  const finishReason = typeof choice.finish_reason === 'string' ? clip(choice.finish_reason, 40) : null;
  const content = message.content;
  if (typeof content !== 'string' || content.trim() === '') {
    if (typeof message.refusal === 'string' && message.refusal !== '') throw new LlmError('empty', `the model refused: ${clip(message.refusal, 200)}`);
    if (content !== null && content !== undefined && typeof content !== 'string') throw new LlmError('malformed', 'choices[0].message.content is not a string');
    throw new LlmError('empty', `the model returned no text${finishReason ? ` (finish_reason ${finishReason})` : ''}`);
  }
  const u = body.usage;
  const usage = isRecord(u) && typeof u.prompt_tokens === 'number' && typeof u.completion_tokens === 'number'
    ? { promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens } : null;
  return { content, finishReason, model: typeof body.model === 'string' ? clip(body.model, 100) : null, usage };
}

/** A client for one endpoint. Throws at creation on an unusable base URL (a configuration error). */
export function createChatClient(options: ChatClientOptions): ChatClient {
  const url = chatCompletionsUrl(options.baseUrl);
  const max = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const doFetch = options.fetch ?? fetch;
  if (!(options.timeoutMs > 0)) throw new Error('LLM timeout must be positive');
  const key = options.apiKey?.trim();

  return {
    url,
    async complete(request: ChatRequest): Promise<ChatReply> {
      const timeout = AbortSignal.timeout(options.timeoutMs);
      const signal = request.signal === undefined ? timeout : AbortSignal.any([timeout, request.signal]);
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
      if (key) headers.authorization = `Bearer ${key}`;
      const body: Record<string, unknown> = {
        model: request.model,
        messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
        temperature: request.temperature ?? 0,
        max_tokens: request.maxTokens,
      };
      if (request.json) body.response_format = { type: 'json_object' };

      // Which signal ended the exchange decides the error (the caller's abort is not a timeout).
      const whyAborted = (): LlmError | undefined => {
        if (request.signal?.aborted) return new LlmError('aborted', 'the request was cancelled');
        if (timeout.aborted) return new LlmError('timeout', `no complete answer within ${options.timeoutMs} ms`);
        return undefined;
      };

      try {
        const res = await doFetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal, redirect: 'manual' });
        if (res.status >= 300 && res.status < 400) {
          await res.body?.cancel().catch(() => undefined);
          throw new LlmError('http', `HTTP ${res.status}: redirects are not followed (set LLM_BASE_URL to the final URL)`, { status: res.status });
        }
        const text = await readCapped(res, max);
        if (!res.ok) {
          const e = errorBody(text);
          const retryAfter = res.headers.get('retry-after') ?? undefined;
          const label = [e?.type, e?.code].filter((x): x is string => x !== undefined && x !== '').map((x) => clip(x, 60)).join(', ');
          const message = e?.message !== undefined ? clip(e.message, 300) : clip(text, 120) || res.statusText || 'no body';
          throw new LlmError('http', `HTTP ${res.status}${label ? ` (${label})` : ''}: ${message}${retryAfter ? ` (retry after ${clip(retryAfter, 40)})` : ''}`, {
            status: res.status,
            ...(e?.type ? { type: clip(e.type, 60) } : {}),
            ...(e?.code ? { code: clip(e.code, 60) } : {}),
            ...(retryAfter ? { retryAfter: clip(retryAfter, 40) } : {}),
          });
        }
        return parseReply(text);
      } catch (e) {
        const aborted = whyAborted();
        if (aborted !== undefined) throw aborted;
        if (e instanceof LlmError) throw e;
        const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
        throw new LlmError('network', clip(`${e instanceof Error ? e.message : String(e)}${cause}`, 200));
      }
    },
  };
}
