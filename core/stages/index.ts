/**
 * What each standard stage adds to the request context, and what it needs.
 * Implementations live in adapters/plugins and are built in config/; these
 * types are what makes a mis-ordered pipeline fail to compile.
 */
import type { RequestContext } from '../context.js';
import type { Account, PlanId } from '../accounts.js';
import type { AuthenticationFailed, BadRequest, Forbidden, NoCredits, RateLimited, ServiceUnavailable, TargetNotAllowed, Unauthorized, UnsupportedMediaType } from '../errors.js';
import type { Schema, SemanticCheck } from '../schema.js';
import type { RateDecision } from '../ports.js';
import type { Stage } from '../pipeline.js';

export type { PlanId };

export interface AccountRef {
  readonly id: string;
  readonly plan: PlanId;
  readonly keyId: string;
  /**
   * The account as auth read it, in the same lookup as the key (after the
   * period rollover, when one was due). Credit figures can move while the
   * request runs; charges never read them from here.
   */
  readonly snapshot: Account;
}

/** auth: who is calling. */
export interface Authenticated { readonly account: AccountRef }
/** validate: the body, checked against the route's schema. */
export interface Validated<T> { readonly input: T }
/** quota: the rate-limit decision (its headers are already on ctx.reply). */
export interface Admitted { readonly rateLimit: RateDecision }
/** gate: the plan allows every feature the request asks for (adds nothing). */
export interface Gated { readonly gated: true }
/** reserve: the hold placed for the credits this request will cost, settled by bill (or released on failure). */
export interface Reserved {
  readonly hold: {
    readonly id: string;
    readonly operation: string;
    /** What was held: the most the request can be charged. */
    readonly credits: number;
    /** What to charge instead, when the work turned out cheaper (bulk scrape: successful URLs only). */
    actual?: number;
    settled: boolean;
    /**
     * Nothing is held on the account (the reserve stage's `chargeAfter`
     * option): bill charges only if the balance covers the price then,
     * else the request ends 402 with nothing charged.
     */
    readonly deferred?: boolean;
  };
}

/** Options of the stage kit's reserve. */
export interface ReserveOptions<T> {
  /**
   * For which inputs the price is charged after the work, without a hold
   * before it: only for a fixed price whose work has no outside effects
   * (it reads: an index query, a provider's search), since under a race
   * the work may run and then be refused 402 (nothing charged, the result
   * dropped). It saves the hold's commit. The auth snapshot is checked
   * first: when it shows too little, a real hold is taken instead (402 at
   * once, exact). Bill then charges only what the balance covers
   * (AccountStore.charge): no overdraft either way.
   */
  readonly chargeAfter?: (input: T) => boolean;
}
/** bill: what was charged. */
export interface Billed { readonly charge: { readonly creditsUsed: number; readonly remainingCredits: number } }

export type AuthStage = Stage<RequestContext, Authenticated, Unauthorized | AuthenticationFailed | ServiceUnavailable>;
export type QuotaStage = Stage<RequestContext & Authenticated, Admitted, RateLimited | ServiceUnavailable>;
export type ValidateStage<T> = Stage<RequestContext, Validated<T>, BadRequest | TargetNotAllowed | UnsupportedMediaType>;
export type GateStage<T> = Stage<RequestContext & Authenticated & Validated<T>, Gated, Forbidden>;
export type ReserveStage<T> = Stage<RequestContext & Authenticated & Admitted & Validated<T>, Reserved, NoCredits | ServiceUnavailable>;
export type BillStage = Stage<RequestContext & Authenticated & Reserved, Billed, NoCredits | ServiceUnavailable>;

/** admin: the caller sent the admin token. */
export interface AdminAuthenticated { readonly admin: true }
export type AdminStage = Stage<RequestContext, AdminAuthenticated, Unauthorized | AuthenticationFailed>;

/** The unauthenticated counterpart of quota: a per-client-IP limit (developer tools). */
export type ClientQuotaStage = Stage<RequestContext, Admitted, RateLimited | ServiceUnavailable>;

/** A plan-gated feature of a request (spec rule 3: contacts need Starter, social needs Builder). */
export type Feature = 'contacts' | 'social' | (string & {});

/** The stage implementations the composition root hands to operation plugins. */
export interface StageKit {
  readonly clientQuota: ClientQuotaStage;
  /**
   * Validation against a schema compiled now (at boot), as a stage; with
   * `check`, the route's own checks too, run over whatever the schema
   * accepted, so that one 400 names every problem (core/stages/validate.ts).
   */
  validate<T>(schema: Schema<T>, check?: SemanticCheck<T>): ValidateStage<T>;
  /** Bearer key -> account (401 UNAUTHORIZED / AUTHENTICATION_FAILED). */
  readonly auth: AuthStage;
  /** The plan's rate windows and concurrency for `operation` (429 RATE_LIMITED); writes x-ratelimit-* on every answer. */
  quota(operation: string): QuotaStage;
  /** 403 FORBIDDEN when the plan lacks a feature the input asks for. */
  /** A feature, or a feature with the request field that asks for it (named in the 403; default: the search field). */
  gate<T>(features: (input: T) => readonly (Feature | { readonly feature: Feature; readonly field: string })[]): GateStage<T>;
  /**
   * Hold the request's price (402 NO_CREDITS when the account cannot cover it); released unless bill runs.
   * With `chargeAfter`, inputs it accepts are not held but charged at bill if covered (see ReserveOptions).
   */
  reserve<T>(operation: string, price: (input: T) => number, options?: ReserveOptions<T>): ReserveStage<T>;
  /**
   * Settle the hold (charge its credits, or the `actual` less): one ledger row; `creditsUsed` and `remainingCredits` for the response.
   * A deferred hold (reserve's `chargeAfter`) is charged only if the balance covers it: 402 NO_CREDITS otherwise.
   */
  readonly bill: BillStage;
  /** The admin token as a bearer token (only when SCOUR_ADMIN_TOKEN is set). */
  readonly admin: AdminStage | undefined;
}
