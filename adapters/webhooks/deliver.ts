/**
 * One webhook attempt: a signed JSON POST through the egress guard. The body
 * is serialised once and exactly those bytes are signed and sent. Redirects
 * are not followed (a 3xx is a failed attempt: the receiver must answer at
 * the URL it registered). Never throws: every outcome is a DeliveryAttempt
 * for the job's record; scheduling retries is the caller's (core/webhooks.ts).
 */
import { randomBytes } from 'node:crypto';
import type { LookupFunction } from 'node:net';
import { fetchGuarded, type Resolver } from '../egress/index.js';
import { BadRequest, TargetNotAllowed, isApiFailure } from '../../core/errors.js';
import {
  WEBHOOK_ATTEMPT_HEADER, WEBHOOK_DELIVERY_HEADER, WEBHOOK_EVENT_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_USER_AGENT,
  type DeliveryAttempt, type WebhookPayload,
} from '../../core/webhooks.js';
import { signPayload } from './sign.js';

export type { DeliveryAttempt } from '../../core/webhooks.js';

export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;
export const DEFAULT_WEBHOOK_MAX_RESPONSE_BYTES = 64 * 1024;
const EXCERPT_CHARS = 200;

export interface DeliverWebhookOptions {
  readonly url: string;
  /** The account's signing secret; several during a rotation (one v1 entry each). */
  readonly secret: string | readonly string[];
  readonly payload: WebhookPayload;
  /** The whole exchange. Default 10 s. */
  readonly timeoutMs?: number;
  readonly allowPrivate: boolean;
  readonly allowAddress?: ((ip: string) => boolean) | undefined;
  readonly resolver?: Resolver | undefined;
  /** For tests only: replaces the guarded lookup (see FetchGuardedOptions.lookup). */
  readonly lookup?: LookupFunction | undefined;
  /** Response bytes read. Default 64 KiB; a larger response fails the attempt (see below). */
  readonly maxResponseBytes?: number;
  /** Epoch ms, for the signature timestamp and attempted_at. Default Date.now. */
  readonly now?: () => number;
  readonly signal?: AbortSignal | undefined;
}

/** A delivery id: stable across the attempts of one delivery. */
export function newDeliveryId(): string {
  return `dlv_${randomBytes(16).toString('hex')}`;
}

function excerpt(body: Buffer): string {
  // 200 code points are at most 800 bytes: decoding a little more never cuts one.
  return Array.from(body.subarray(0, EXCERPT_CHARS * 4 + 4).toString('utf8')).slice(0, EXCERPT_CHARS).join('');
}

function describeFailure(err: unknown): string {
  if (isApiFailure(err)) {
    const extra = err.fields() as { details?: unknown; validation_errors?: Array<{ message?: unknown }> };
    const detail = err instanceof TargetNotAllowed
      ? err.reason
      : typeof extra.details === 'string'
        ? extra.details
        : typeof extra.validation_errors?.[0]?.message === 'string'
          ? extra.validation_errors[0].message
          : err.message;
    return `${err.code}: ${detail}`;
  }
  return `INTERNAL_ERROR: ${err instanceof Error ? err.message : String(err)}`;
}

/**
 * POST `payload` to `url`, signed. ok for a 2xx. Anything else fails the
 * attempt; all failures are retryable except a refusal by the egress guard
 * (and a request Node refuses to build), which no retry can change.
 *
 * A response body over `maxResponseBytes` fails the attempt (retryable)
 * whatever its status: the guarded client reads bodies whole or not at all,
 * so receivers are told to answer with a small body.
 */
export async function deliverWebhook(options: DeliverWebhookOptions): Promise<DeliveryAttempt> {
  const now = options.now ?? Date.now;
  const startedMs = now();
  const started = performance.now();
  const attemptedAt = new Date(startedMs).toISOString();
  const elapsed = () => Math.max(0, Math.round(performance.now() - started));
  try {
    const body = JSON.stringify(options.payload);
    const signature = signPayload(options.secret, body, Math.floor(startedMs / 1000));
    const maxBytes = options.maxResponseBytes ?? DEFAULT_WEBHOOK_MAX_RESPONSE_BYTES;
    const res = await fetchGuarded(options.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': WEBHOOK_USER_AGENT,
        [WEBHOOK_SIGNATURE_HEADER]: signature,
        [WEBHOOK_DELIVERY_HEADER]: options.payload.delivery_id,
        [WEBHOOK_EVENT_HEADER]: options.payload.event,
        [WEBHOOK_ATTEMPT_HEADER]: String(options.payload.attempt),
      },
      body,
      followRedirects: false,
      timeoutMs: options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
      maxBodyBytes: maxBytes,
      maxDecodedBytes: maxBytes,
      allowPrivate: options.allowPrivate,
      allowAddress: options.allowAddress,
      resolver: options.resolver,
      lookup: options.lookup,
      signal: options.signal,
    });
    const status = res.statusCode;
    const ok = status >= 200 && status <= 299;
    const error = ok
      ? null
      : status >= 300 && status <= 399
        ? `HTTP ${status}: redirects are not followed`
        : `HTTP ${status}`;
    return {
      ok, status, error, retryable: !ok,
      duration_ms: elapsed(), attempted_at: attemptedAt, response_excerpt: excerpt(res.body),
    };
  } catch (err) {
    const final = err instanceof TargetNotAllowed || err instanceof BadRequest;
    return {
      ok: false, status: null, error: describeFailure(err), retryable: !final,
      duration_ms: elapsed(), attempted_at: attemptedAt, response_excerpt: null,
    };
  }
}
