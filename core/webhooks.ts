/**
 * Webhook rules without I/O: the payload a bulk job's callback receives, the
 * header names it travels with, and the retry schedule (parsing the
 * operator's setting, and the jittered delay before the next attempt).
 * Signing and sending live in adapters/webhooks.
 */

/** Carries `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`. */
export const WEBHOOK_SIGNATURE_HEADER = 'scour-signature';
/** The delivery id: the same on every attempt of one delivery, so receivers can deduplicate. */
export const WEBHOOK_DELIVERY_HEADER = 'scour-delivery';
export const WEBHOOK_EVENT_HEADER = 'scour-event';
/** 1 for the first attempt, 2 for the first retry, ... */
export const WEBHOOK_ATTEMPT_HEADER = 'scour-attempt';
export const WEBHOOK_USER_AGENT = 'Scour-Webhooks/1';

/**
 * Seconds to wait after each failed attempt: attempt 2 waits 2 s after
 * attempt 1 failed, attempt 3 waits 10 s after attempt 2, ... Attempts in
 * all: 1 + the schedule's length (7 by default, the last about 2 h 37 min
 * after the first, before jitter).
 */
export const DEFAULT_WEBHOOK_SCHEDULE_SECONDS: readonly number[] = [2, 10, 60, 300, 1800, 7200];
/** Each delay is scaled by a factor drawn uniformly from [1 - JITTER, 1 + JITTER), so retries of many jobs spread out. */
export const WEBHOOK_JITTER = 0.2;
export const WEBHOOK_SCHEDULE_MAX_ENTRIES = 20;
export const WEBHOOK_SCHEDULE_MIN_SECONDS = 1;
export const WEBHOOK_SCHEDULE_MAX_SECONDS = 24 * 60 * 60;

export type WebhookEvent = 'bulk_scrape.completed' | 'bulk_scrape.failed' | 'crawl.completed' | 'crawl.failed' | 'research.completed' | 'research.failed';

export interface WebhookPayload {
  readonly event: WebhookEvent;
  /** Stable across the attempts of one delivery. */
  readonly delivery_id: string;
  readonly job_id: string;
  /** ISO 8601: when the job was created. */
  readonly created_at: string;
  /** ISO 8601: when this attempt was made. */
  readonly sent_at: string;
  /** 1-based number of this attempt. */
  readonly attempt: number;
  readonly data: unknown;
}

export interface BuildPayloadInput {
  readonly event: WebhookEvent;
  readonly deliveryId: string;
  readonly jobId: string;
  /** The job's creation time (Date, epoch ms, or ISO text). */
  readonly createdAt: Date | number | string;
  /** This attempt's time. */
  readonly sentAt: Date | number;
  readonly attempt: number;
  readonly data: unknown;
}

/** Throws RangeError on an invalid time: a caller bug, not a delivery failure. */
const iso = (t: Date | number | string): string => new Date(t).toISOString();

/** The payload of one attempt; keys in a fixed order so the serialised body reads the same every time. */
export function buildPayload(input: BuildPayloadInput): WebhookPayload {
  return {
    event: input.event,
    delivery_id: input.deliveryId,
    job_id: input.jobId,
    created_at: iso(input.createdAt),
    sent_at: iso(input.sentAt),
    attempt: input.attempt,
    data: input.data,
  };
}

/** How many attempts a schedule allows in all. */
export function webhookMaxAttempts(schedule: readonly number[]): number {
  return 1 + schedule.length;
}

/**
 * Milliseconds to wait before the next attempt, after `attemptsMade`
 * attempts have failed; undefined once the schedule is used up (give up).
 * No attempt made yet means "now" (0). `random` returns [0, 1) like
 * Math.random; it is injected so tests can pin the jitter.
 */
export function nextAttemptDelayMs(
  attemptsMade: number, schedule: readonly number[], random: () => number,
): number | undefined {
  if (!Number.isFinite(attemptsMade) || attemptsMade < 1) return 0;
  const base = schedule[Math.floor(attemptsMade) - 1];
  if (base === undefined) return undefined;
  let r = random();
  // A misbehaving source must not push the delay out of its ±JITTER band.
  if (!Number.isFinite(r) || r < 0) r = 0;
  if (r > 1) r = 1;
  const factor = 1 + (r * 2 - 1) * WEBHOOK_JITTER;
  return Math.max(0, Math.round(Math.max(0, base) * 1000 * factor));
}

const UNIT_SECONDS: Readonly<Record<string, number>> = { '': 1, s: 1, m: 60, h: 3600 };

/**
 * The operator's schedule setting: comma-separated delays, each a whole
 * number with an optional unit s, m or h (plain numbers are seconds), e.g.
 * "2s,10s,1m,5m,30m,2h". 1 to 20 entries, each from 1 s to 24 h; the order
 * is the operator's (non-decreasing is not required).
 */
export function parseWebhookSchedule(raw: string): number[] | { error: string } {
  if (typeof raw !== 'string' || raw.trim() === '') return { error: 'the webhook schedule is empty' };
  if (raw.length > 1000) return { error: 'the webhook schedule is too long' };
  const parts = raw.split(',');
  if (parts.length > WEBHOOK_SCHEDULE_MAX_ENTRIES) {
    return { error: `the webhook schedule has ${parts.length} entries; at most ${WEBHOOK_SCHEDULE_MAX_ENTRIES} are allowed` };
  }
  const out: number[] = [];
  for (const [i, part] of parts.entries()) {
    const text = part.trim();
    const m = /^([0-9]{1,9})([smhSMH]?)$/.exec(text);
    if (!m) {
      return { error: `webhook schedule entry ${i + 1} ("${text.slice(0, 40)}") is not a whole number with an optional unit s, m or h` };
    }
    const seconds = Number(m[1]) * (UNIT_SECONDS[(m[2] ?? '').toLowerCase()] ?? 1);
    if (seconds < WEBHOOK_SCHEDULE_MIN_SECONDS || seconds > WEBHOOK_SCHEDULE_MAX_SECONDS) {
      return { error: `webhook schedule entry ${i + 1} ("${text}") must be from 1 s to 24 h` };
    }
    out.push(seconds);
  }
  return out;
}

/** One delivery attempt as recorded on the job (and shown by its status). */
export interface DeliveryAttempt {
  /** The receiver answered 2xx. */
  readonly ok: boolean;
  /** The receiver's HTTP status; null when none arrived (refused, unreachable, timed out). */
  readonly status: number | null;
  /** Why the attempt failed ("HTTP 500", "TARGET_TIMEOUT: ..."); null on success. */
  readonly error: string | null;
  /** False only when trying again cannot help (the egress guard refused the URL): stop retrying. */
  readonly retryable: boolean;
  readonly duration_ms: number;
  /** ISO 8601: when the attempt started. */
  readonly attempted_at: string;
  /** The first 200 characters of the response body; null when no response arrived. */
  readonly response_excerpt: string | null;
}
