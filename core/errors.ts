/**
 * The error model of spec section 7: one tagged error per failure. Each class
 * knows its HTTP status and machine code; `fields()` gives the extra body
 * fields the spec lists for that failure. Only the HTTP layer turns these into
 * responses (see `errorBody`), so the rest of the code just fails with them.
 */
import { Data } from 'effect';

export interface FieldIssue {
  readonly field: string;
  readonly message: string;
}

/** validation_errors lists at most this many entries (one of them the "and K more" line). */
export const MAX_LISTED_ISSUES = 100;

/**
 * The validation_errors of a response: each `{field, message}` (nothing
 * else), and at most MAX_LISTED_ISSUES of them: past that, the first 99 and
 * a last `{field: "body", message: "and K more problems"}`, so a body of a
 * thousand bad values cannot make a thousand-line answer.
 */
export function listedIssues(issues: readonly FieldIssue[], unlisted = 0): FieldIssue[] {
  const fits = issues.length <= MAX_LISTED_ISSUES && unlisted === 0;
  const shown = fits ? issues : issues.slice(0, MAX_LISTED_ISSUES - 1);
  const out = shown.map((i) => ({ field: i.field, message: i.message }));
  if (!fits) out.push({ field: 'body', message: `and ${issues.length - shown.length + unlisted} more problems` });
  return out;
}

/** What every API failure exposes to the HTTP layer. */
export interface ApiFailure {
  readonly _tag: string;
  readonly status: number;
  readonly code: string;
  readonly message: string;
  /** Extra body fields (spec 7.1 names: retry_after, limit, ...). */
  fields(): Record<string, unknown>;
  /** Extra response headers (Allow, Retry-After, ...). */
  headers?(): Record<string, string>;
}

/** A catalogue entry: the documentation test reads these. */
export interface ErrorSpec {
  readonly tag: string;
  readonly status: number;
  readonly code: string;
  readonly summary: string;
}

const catalogue = new Map<string, ErrorSpec>();

/** Every error class registers itself here once, at module load. */
export function registerError(spec: ErrorSpec): void {
  const prior = catalogue.get(spec.tag);
  if (prior && (prior.code !== spec.code || prior.status !== spec.status)) {
    throw new Error(`error tag ${spec.tag} registered twice with different codes`);
  }
  catalogue.set(spec.tag, spec);
}

export function errorCatalogue(): readonly ErrorSpec[] {
  return [...catalogue.values()];
}

/** The catalogue entry of one error tag (for plugins that declare the failures they can produce). */
export function errorSpec(tag: string): ErrorSpec {
  const s = catalogue.get(tag);
  if (!s) throw new Error(`unknown error tag ${tag}`);
  return s;
}

export function isApiFailure(u: unknown): u is ApiFailure {
  return (
    typeof u === 'object' && u !== null &&
    typeof (u as ApiFailure).status === 'number' &&
    typeof (u as ApiFailure).code === 'string' &&
    typeof (u as ApiFailure).fields === 'function'
  );
}

const spec = (tag: string, status: number, code: string, summary: string): ErrorSpec => {
  const s = { tag, status, code, summary };
  registerError(s);
  return s;
};

const S_BAD = spec('BadRequest', 400, 'MISSING_PARAMETER', 'A parameter is missing or invalid, or the body is malformed. Carries validation_errors.');
/** 400: a missing or invalid parameter, malformed body. The spec uses one code for every 400. */
export class BadRequest extends Data.TaggedError('BadRequest')<{
  readonly message: string;
  readonly validationErrors: readonly FieldIssue[];
  readonly details?: string;
  /** Problems found past validationErrors, counted but not described (in the last "and K more" entry). */
  readonly unlisted?: number;
}> implements ApiFailure {
  readonly status = S_BAD.status;
  readonly code = S_BAD.code;
  fields() {
    const listed = listedIssues(this.validationErrors, this.unlisted);
    return this.details === undefined
      ? { validation_errors: listed }
      : { details: this.details, validation_errors: listed };
  }
  static of(field: string, message: string, summary = 'Invalid request'): BadRequest {
    return new BadRequest({ message: summary, validationErrors: [{ field, message }] });
  }
}

const S_UNAUTH = spec('Unauthorized', 401, 'UNAUTHORIZED', 'The Authorization header is missing or is not "Bearer <key>".');
export class Unauthorized extends Data.TaggedError('Unauthorized')<{ readonly message: string }> implements ApiFailure {
  readonly status = S_UNAUTH.status;
  readonly code = S_UNAUTH.code;
  fields() { return {}; }
  headers() { return { 'www-authenticate': 'Bearer' }; }
}

const S_AUTHFAIL = spec('AuthenticationFailed', 401, 'AUTHENTICATION_FAILED', 'The API key is unknown, revoked or expired.');
export class AuthenticationFailed extends Data.TaggedError('AuthenticationFailed')<{ readonly message: string }> implements ApiFailure {
  readonly status = S_AUTHFAIL.status;
  readonly code = S_AUTHFAIL.code;
  fields() { return {}; }
  headers() { return { 'www-authenticate': 'Bearer error="invalid_token"' }; }
}

const S_CREDITS = spec('NoCredits', 402, 'NO_CREDITS', 'The account does not hold the credits this request costs. Carries credits_remaining.');
export class NoCredits extends Data.TaggedError('NoCredits')<{
  readonly message: string;
  readonly creditsRemaining: number;
  readonly creditsRequired: number;
  readonly upgradeUrl: string;
}> implements ApiFailure {
  readonly status = S_CREDITS.status;
  readonly code = S_CREDITS.code;
  fields() {
    return { credits_remaining: this.creditsRemaining, credits_required: this.creditsRequired, upgrade_url: this.upgradeUrl };
  }
}

const S_FORBIDDEN = spec('Forbidden', 403, 'FORBIDDEN', 'The plan does not include this feature. Carries upgrade_url.');
export class Forbidden extends Data.TaggedError('Forbidden')<{ readonly message: string; readonly upgradeUrl: string }> implements ApiFailure {
  readonly status = S_FORBIDDEN.status;
  readonly code = S_FORBIDDEN.code;
  fields() { return { upgrade_url: this.upgradeUrl }; }
}

const S_NOTFOUND = spec('NotFound', 404, 'NOT_FOUND', 'No route matches the path, or the account or key does not exist.');
export class NotFound extends Data.TaggedError('NotFound')<{ readonly message: string }> implements ApiFailure {
  readonly status = S_NOTFOUND.status;
  readonly code = S_NOTFOUND.code;
  fields() { return {}; }
}

const S_METHOD = spec('MethodNotAllowed', 405, 'METHOD_NOT_ALLOWED', 'The path exists but not for this method. The Allow header lists the methods.');
export class MethodNotAllowed extends Data.TaggedError('MethodNotAllowed')<{ readonly message: string; readonly allow: readonly string[] }> implements ApiFailure {
  readonly status = S_METHOD.status;
  readonly code = S_METHOD.code;
  fields() { return { allowed_methods: this.allow }; }
  headers() { return { allow: this.allow.join(', ') }; }
}

const S_TOOLARGE = spec('PayloadTooLarge', 413, 'PAYLOAD_TOO_LARGE', 'The request body exceeds the configured limit. Carries limit (bytes).');
export class PayloadTooLarge extends Data.TaggedError('PayloadTooLarge')<{ readonly message: string; readonly limit: number }> implements ApiFailure {
  readonly status = S_TOOLARGE.status;
  readonly code = S_TOOLARGE.code;
  fields() { return { limit: this.limit }; }
}

const S_MEDIA = spec('UnsupportedMediaType', 415, 'UNSUPPORTED_MEDIA_TYPE', 'The body is not application/json or application/msgpack.');
export class UnsupportedMediaType extends Data.TaggedError('UnsupportedMediaType')<{ readonly message: string }> implements ApiFailure {
  readonly status = S_MEDIA.status;
  readonly code = S_MEDIA.code;
  fields() { return {}; }
}

const S_RATE = spec('RateLimited', 429, 'RATE_LIMITED', 'A rate, concurrency or burst limit was exceeded. Carries retry_after, limit, remaining, reset, upgrade_url.');
export class RateLimited extends Data.TaggedError('RateLimited')<{
  readonly message: string;
  readonly retryAfter: number;
  readonly limit: number;
  readonly remaining: number;
  /** Unix seconds. */
  readonly reset: number;
  readonly upgradeUrl: string;
}> implements ApiFailure {
  readonly status = S_RATE.status;
  readonly code = S_RATE.code;
  fields() {
    return { retry_after: this.retryAfter, limit: this.limit, remaining: this.remaining, reset: this.reset, upgrade_url: this.upgradeUrl };
  }
  headers() { return { 'retry-after': String(this.retryAfter) }; }
}

const S_INTERNAL = spec('InternalError', 500, 'INTERNAL_ERROR', 'Unexpected server error. Retry later with backoff.');
export class InternalError extends Data.TaggedError('InternalError')<{ readonly message: string }> implements ApiFailure {
  readonly status = S_INTERNAL.status;
  readonly code = S_INTERNAL.code;
  fields() { return {}; }
}

const S_UNAVAILABLE = spec('ServiceUnavailable', 503, 'SERVICE_UNAVAILABLE', 'The server is shutting down, or its database or Redis cannot be reached. Retry later.');
export class ServiceUnavailable extends Data.TaggedError('ServiceUnavailable')<{ readonly message: string; readonly retryAfter: number }> implements ApiFailure {
  readonly status = S_UNAVAILABLE.status;
  readonly code = S_UNAVAILABLE.code;
  fields() { return { retry_after: this.retryAfter }; }
  headers() { return { 'retry-after': String(this.retryAfter) }; }
}

const S_NOT_ALLOWED = spec('TargetNotAllowed', 400, 'TARGET_NOT_ALLOWED', 'The URL (or a redirect, or the address its name resolves to) is not a public http(s) target: a scheme other than http and https (ftp:, file:, data:, javascript:, ...), credentials or port 0 in the URL, or a loopback, private, link-local, CGNAT, multicast, unspecified or cloud-metadata address. Carries validation_errors.');
/** 400: the egress guard refused the target (scheme, credentials, address, or a redirect to one): the same code wherever it is met. */
export class TargetNotAllowed extends Data.TaggedError('TargetNotAllowed')<{
  readonly message: string;
  readonly field: string;
  readonly reason: string;
  /** Every refused target of the request, when there are several (a bulk scrape's URLs, a crawl's URL and callback). */
  readonly issues?: readonly FieldIssue[];
}> implements ApiFailure {
  readonly status = S_NOT_ALLOWED.status;
  readonly code = S_NOT_ALLOWED.code;
  fields() { return { validation_errors: listedIssues(this.issues ?? [{ field: this.field, message: this.reason }]) }; }
}

const S_NO_PROXY = spec('ProxyNotAvailable', 400, 'PROXY_NOT_AVAILABLE', 'No proxy of the requested proxy_type and proxy_country is configured on this server. Carries validation_errors and available.');
export class ProxyNotAvailable extends Data.TaggedError('ProxyNotAvailable')<{
  readonly message: string;
  readonly field: string;
  /** What the server has, e.g. ["datacenter:US", "residential:DE"]. */
  readonly available: readonly string[];
}> implements ApiFailure {
  readonly status = S_NO_PROXY.status;
  readonly code = S_NO_PROXY.code;
  fields() { return { validation_errors: [{ field: this.field, message: this.message }], available: this.available }; }
}

const S_BLOCKED = spec('TargetBlocked', 403, 'TARGET_BLOCKED', 'The target site refused the request (HTTP 403 or an anti-bot challenge page). Not a plan limit. Carries status_code.');
export class TargetBlocked extends Data.TaggedError('TargetBlocked')<{ readonly message: string; readonly statusCode: number }> implements ApiFailure {
  readonly status = S_BLOCKED.status;
  readonly code = S_BLOCKED.code;
  fields() { return { status_code: this.statusCode }; }
}

const S_UNREACHABLE = spec('TargetUnreachable', 502, 'TARGET_UNREACHABLE', 'The target could not be reached: its name does not resolve, the connection was refused or reset, TLS failed, or every proxy failed. Carries details.');
export class TargetUnreachable extends Data.TaggedError('TargetUnreachable')<{ readonly message: string; readonly details: string }> implements ApiFailure {
  readonly status = S_UNREACHABLE.status;
  readonly code = S_UNREACHABLE.code;
  fields() { return { details: this.details }; }
}

const S_BAD_RESPONSE = spec('TargetResponseInvalid', 502, 'TARGET_RESPONSE_INVALID', 'The target answered with something the service will not take: a body over the size limit, a compressed body that expands past the limit, too many redirects, or a broken encoding. Carries details and limit where one applies.');
export class TargetResponseInvalid extends Data.TaggedError('TargetResponseInvalid')<{ readonly message: string; readonly details: string; readonly limit?: number }> implements ApiFailure {
  readonly status = S_BAD_RESPONSE.status;
  readonly code = S_BAD_RESPONSE.code;
  fields() { return this.limit === undefined ? { details: this.details } : { details: this.details, limit: this.limit }; }
}

const S_DOC_ENCRYPTED = spec('DocumentEncrypted', 422, 'DOCUMENT_ENCRYPTED', 'The target is a document (a PDF) that is encrypted with a password: its text cannot be read. Nothing is charged. Carries document_type.');
export class DocumentEncrypted extends Data.TaggedError('DocumentEncrypted')<{ readonly message: string; readonly documentType: string }> implements ApiFailure {
  readonly status = S_DOC_ENCRYPTED.status;
  readonly code = S_DOC_ENCRYPTED.code;
  fields() { return { document_type: this.documentType }; }
}

const S_DOC_UNREADABLE = spec('DocumentUnreadable', 422, 'DOCUMENT_UNREADABLE', 'The target is a document (PDF, DOCX, a feed) that is broken or could not be read within the time limit. Nothing is charged. Carries document_type and details.');
export class DocumentUnreadable extends Data.TaggedError('DocumentUnreadable')<{ readonly message: string; readonly documentType: string; readonly details: string }> implements ApiFailure {
  readonly status = S_DOC_UNREADABLE.status;
  readonly code = S_DOC_UNREADABLE.code;
  fields() { return { document_type: this.documentType, details: this.details }; }
}

const S_ACTION_FAILED = spec('ActionFailed', 422, 'ACTION_FAILED', 'A browser action of a scrape with actions_required failed (its selector matched nothing, its script threw, its time ran out); the rest were not run and nothing was charged. Carries action (index, type, error) and results (the actions run, the failed one last).');
/** 422: with actions_required, an action failed; nothing is charged. */
export class ActionFailed extends Data.TaggedError('ActionFailed')<{
  readonly message: string;
  readonly index: number;
  readonly type: string;
  readonly error: string;
  readonly results: readonly unknown[];
}> implements ApiFailure {
  readonly status = S_ACTION_FAILED.status;
  readonly code = S_ACTION_FAILED.code;
  fields() { return { action: { index: this.index, type: this.type, error: this.error }, results: this.results }; }
}

const S_TIMEOUT = spec('TargetTimeout', 504, 'TARGET_TIMEOUT', 'The target took longer than the request timeout (default 30 s) to answer, or a wait_for element did not appear in time. Carries timeout (seconds).');
export class TargetTimeout extends Data.TaggedError('TargetTimeout')<{ readonly message: string; readonly timeoutSeconds: number }> implements ApiFailure {
  readonly status = S_TIMEOUT.status;
  readonly code = S_TIMEOUT.code;
  fields() { return { timeout: this.timeoutSeconds }; }
}

const S_SEARCH_DOWN = spec('SearchUnavailable', 502, 'SEARCH_UNAVAILABLE', 'Every search provider failed or timed out; nothing was charged. Carries warnings (one per provider: provider, code, message) and retry_after.');
/** 502: no search provider answered (one that answers, even with nothing, makes a 200). */
export class SearchUnavailable extends Data.TaggedError('SearchUnavailable')<{
  readonly message: string;
  readonly warnings: readonly { readonly provider: string; readonly code: string; readonly message: string }[];
  readonly retryAfter: number;
}> implements ApiFailure {
  readonly status = S_SEARCH_DOWN.status;
  readonly code = S_SEARCH_DOWN.code;
  fields() { return { warnings: this.warnings, retry_after: this.retryAfter }; }
  headers() { return { 'retry-after': String(this.retryAfter) }; }
}

const S_MODEL_UNAVAILABLE = spec('ModelUnavailable', 503, 'MODEL_UNAVAILABLE', 'A field that needs a model (extract_json) was asked of a server with no model configured (LLM_BASE_URL), or the model server failed (an HTTP error, refused connection, malformed reply); nothing was charged. Carries details.');
/** 503: no model on this server, or the model server failed (extract_json); nothing is charged. */
export class ModelUnavailable extends Data.TaggedError('ModelUnavailable')<{ readonly message: string; readonly details: string; readonly retryAfter?: number }> implements ApiFailure {
  readonly status = S_MODEL_UNAVAILABLE.status;
  readonly code = S_MODEL_UNAVAILABLE.code;
  fields() { return this.retryAfter === undefined ? { details: this.details } : { details: this.details, retry_after: this.retryAfter }; }
  headers(): Record<string, string> { return this.retryAfter === undefined ? {} : { 'retry-after': String(this.retryAfter) }; }
}

const S_MODEL_INVALID = spec('ModelOutputInvalid', 502, 'MODEL_OUTPUT_INVALID', 'The model answered twice (the second time told what was wrong with the first) with something that is not JSON or does not validate against extract_json.schema; nothing was charged. Carries details and model_errors (path, message each).');
/** 502: the model's answers were not JSON, or did not fit the caller's schema, twice; nothing is charged. */
export class ModelOutputInvalid extends Data.TaggedError('ModelOutputInvalid')<{ readonly message: string; readonly details: string; readonly problems: readonly FieldIssue[] }> implements ApiFailure {
  readonly status = S_MODEL_INVALID.status;
  readonly code = S_MODEL_INVALID.code;
  fields() { return { details: this.details, model_errors: this.problems.map((p) => ({ path: p.field, message: p.message })) }; }
}

const S_MODEL_TIMEOUT = spec('ModelTimeout', 504, 'MODEL_TIMEOUT', 'The model gave no complete answer within the request\'s timeout (or LLM_TIMEOUT); nothing was charged. Carries timeout (seconds).');
/** 504: the model did not answer in time (extract_json); nothing is charged. */
export class ModelTimeout extends Data.TaggedError('ModelTimeout')<{ readonly message: string; readonly timeoutSeconds: number }> implements ApiFailure {
  readonly status = S_MODEL_TIMEOUT.status;
  readonly code = S_MODEL_TIMEOUT.code;
  fields() { return { timeout: this.timeoutSeconds }; }
}

/** The spec 7.1 error body. */
export interface ErrorBody {
  readonly error: string;
  readonly code: string;
  readonly request_id: string;
  readonly timestamp: string;
  readonly [extra: string]: unknown;
}

export function errorBody(failure: ApiFailure, requestId: string, now: Date): ErrorBody {
  return { error: failure.message, code: failure.code, ...failure.fields(), request_id: requestId, timestamp: now.toISOString() };
}
