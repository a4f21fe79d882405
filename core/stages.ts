/**
 * What each standard stage adds to the request context, and what it needs.
 * Implementations live in adapters/plugins and are built in config/; these
 * types are what makes a mis-ordered pipeline fail to compile.
 */
import type { RequestContext } from './context.js';
import type { AuthenticationFailed, BadRequest, Forbidden, NoCredits, RateLimited, Unauthorized, UnsupportedMediaType } from './errors.js';
import type { Schema } from './schema.js';
import type { RateDecision } from './ports.js';
import type { Stage } from './pipeline.js';

export type PlanId = 'free' | 'starter' | 'builder' | 'unicorn';

export interface AccountRef {
  readonly id: string;
  readonly plan: PlanId;
  readonly keyId: string;
}

/** auth: who is calling. */
export interface Authenticated { readonly account: AccountRef }
/** validate: the body, checked against the route's schema. */
export interface Validated<T> { readonly input: T }
/** quota: the rate-limit decision (its headers are already on ctx.reply). */
export interface Admitted { readonly rateLimit: RateDecision }
/** fetch: the document fetched from the target. */
export interface Fetched {
  readonly document: {
    readonly url: string;
    readonly finalUrl: string;
    readonly statusCode: number;
    readonly headers: Readonly<Record<string, string>>;
    readonly body: string;
    readonly loadTimeSeconds: number;
  };
}
/** extract: the extractors' output, by field name. */
export interface Extracted { readonly extracted: Readonly<Record<string, unknown>> }
/** analyse: derived analysis (research insights, contacts, ...). */
export interface Analysed { readonly analysis: Readonly<Record<string, unknown>> }
/** bill: what was charged. */
export interface Billed { readonly charge: { readonly creditsUsed: number; readonly remainingCredits: number } }

export type AuthStage = Stage<RequestContext, Authenticated, Unauthorized | AuthenticationFailed>;
export type QuotaStage = Stage<RequestContext & Authenticated, Admitted, RateLimited | Forbidden | NoCredits>;
export type ValidateStage<T> = Stage<RequestContext, Validated<T>, BadRequest | UnsupportedMediaType>;
export type FetchStage<Body> = Stage<RequestContext & Validated<Body>, Fetched, BadRequest>;
export type ExtractStage = Stage<Fetched, Extracted>;
export type AnalyseStage = Stage<Extracted, Analysed>;
export type BillStage = Stage<RequestContext & Authenticated & Admitted, Billed, NoCredits>;

/** The unauthenticated counterpart of quota: a per-client-IP limit (developer tools). */
export type ClientQuotaStage = Stage<RequestContext, Admitted, RateLimited>;

/** The stage implementations the composition root hands to operation plugins. */
export interface StageKit {
  readonly clientQuota: ClientQuotaStage;
  /** Validation against a schema compiled now (at boot), as a stage. */
  validate<T>(schema: Schema<T>): ValidateStage<T>;
}
