/**
 * The plugin contract. A plugin is a plain object with a literal `name`, a
 * `kind` and the names it depends on; `definePlugin` (and the typed helpers
 * in plugins/sdk) keep the literal types. Operation plugins contribute routes;
 * tool plugins are served by the tools operation; extractors, fetchers,
 * proxy providers, ... are looked up by kind.
 */
import type { Effect, Scope } from 'effect';
import type { ApiFailure, ErrorSpec } from './errors.js';
import type { RequestContext } from './context.js';
import type { JsonSchema, Schema, SemanticCheck } from './schema.js';
import type { StageKit } from './stages/index.js';
import type { Metrics, RateRule } from './ports.js';
import type { PlanId } from './accounts.js';
import type { AccountAdmin } from './account-admin.js';
import type { JobsHost } from './jobs.js';
import type { ExtractionPort } from './extraction.js';
import type { PageReader } from './page.js';
import type { Prices } from './prices.js';

export type PluginKind =
  | 'operation' | 'tool' | 'extractor' | 'fetcher' | 'proxy-provider'
  | 'search-provider' | 'analyser' | 'exporter';

export const PLUGIN_KINDS: readonly PluginKind[] = [
  'operation', 'tool', 'extractor', 'fetcher', 'proxy-provider', 'search-provider', 'analyser', 'exporter',
];

export interface PluginBase<N extends string = string, K extends PluginKind = PluginKind> {
  readonly name: N;
  readonly kind: K;
  readonly dependsOn?: readonly string[];
  readonly description?: string;
  /** Error kinds this plugin can fail with beyond the core's (for docs and OpenAPI). */
  readonly errors?: readonly ErrorSpec[];
  /** Acquire resources (workers, pools). Called once at boot, in dependency order. */
  readonly start?: () => Promise<void> | void;
  /**
   * Pay first-use costs now (loading a large module, building a cache), so
   * no request waits on them: the event loop is single-threaded, and a
   * second spent loading a module on a request's path is a second every
   * request in flight waits. Called once at boot, after start and before the
   * server listens, when warm-up is on (SCOUR_WARMUP, on by default). It must
   * not acquire what stop would have to release, and it must be safe to skip.
   */
  readonly warm?: () => Promise<void> | void;
  /** Release them. Called at shutdown, in reverse order. */
  readonly stop?: () => Promise<void> | void;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a route answers with: JSON (or msgpack) objects, or text. */
export type Produces = 'json' | { readonly contentType: string };

export interface Route<Req = unknown, Res = unknown> {
  readonly method: HttpMethod;
  /** Static segments and `{param}` segments, e.g. `/v1/scrape/bulk/{job_id}`. */
  readonly path: string;
  readonly summary: string;
  readonly description?: string;
  readonly tags?: readonly string[];
  readonly auth: 'none' | 'bearer' | 'admin';
  /** The body schema. Declaring it makes the adapter read and decode the body; the route's pipeline must include the validate stage (checked at boot). */
  readonly request?: Schema<Req>;
  readonly response?: Schema<Res>;
  readonly produces?: Produces;
  /** Statuses this route can answer besides 200, for OpenAPI. */
  readonly failures?: readonly number[];
  /** The whole per-request work: stages then the operation. Built once at boot. */
  readonly handle: ((ctx: RequestContext) => Effect.Effect<Res, ApiFailure, Scope.Scope | never>) & { readonly stageNames?: readonly string[] };
  /** Request headers (lower-case) the route reads beyond accept, content-type (routes with a body) and authorization (authenticated routes). */
  readonly headers?: readonly string[];
  /** Status of a success (default 200; 201 for creations, 202 for accepted jobs). */
  readonly status?: 200 | 201 | 202;
  /**
   * A second success shape, for routes whose answer depends on the request
   * (a bulk scrape answers 200 with results, or 202 with a job when given a
   * callback): results that `when` picks are sent with this status and
   * serialised with this schema. JSON routes only.
   */
  readonly alternate?: { readonly status: 202; readonly response: Schema<any>; readonly when: (response: Res) => boolean };
  /** Whether to add `request_id` to the success body (true for JSON API responses). */
  readonly stampRequestId?: boolean;
  /**
   * The answer may be streamed: the pipeline may call `ctx.reply.stream()`
   * (core/context.ts) to send the success status and headers before its
   * work is done and the body in parts; the handler's value is then the
   * rest of the body, a string. JSON routes only; without this flag
   * stream() always answers undefined.
   */
  readonly streams?: boolean;
  /**
   * The status and body of this route's failures, for a route that answers
   * in another API's shape (the Tavily-compatible routes): its clients read
   * their own error body, not the spec's. Headers stay (Retry-After, the
   * rate-limit headers). Default: the failure's status and `errorBody`.
   */
  readonly errorShape?: {
    /** The status and body of one failure. */
    readonly of: (failure: ApiFailure, requestId: string) => { readonly status: number; readonly body: unknown };
    /** The body's JSON Schema, for OpenAPI. */
    readonly schema: JsonSchema;
  };
}

/** What operation plugins get at boot to build their routes. Never used per request. */
export interface PluginHost {
  readonly registry: PluginLookup;
  readonly stages: StageKit;
  readonly settings: HostSettings;
  readonly metrics: Metrics;
  /** Account administration (accounts, keys, credits), for the usage and admin operations. */
  readonly accounts: AccountAdmin;
  /** The plans' limits, for operations that bound their own work by them (bulk scrape's concurrency). */
  readonly limits: (plan: PlanId, operation: string) => { readonly windows: readonly RateRule[]; readonly concurrency: number };
  /** Every route of the app; available once all operation plugins have built theirs (call it lazily). */
  readonly allRoutes: () => readonly Route<any, any>[];
  /** Durable jobs (asynchronous bulk scrape, webhooks): their store, their queue, and where the executor is registered. */
  readonly jobs: JobsHost;
  /** Where the built-in extractors run (a worker pool, core/extraction.ts); absent: in the caller's thread. */
  readonly extraction?: ExtractionPort;
  /**
   * The page pipeline (core/page.ts): the only way an operation reads a
   * page. Built from the registered fetchers, proxy providers and
   * extractors on first use (a server without an HTTP fetcher fails then).
   */
  readonly pages: PageReader;
  /** The price table (core/prices.ts has the rules that read it). */
  readonly prices: Prices;
}

export interface HostSettings {
  readonly upgradeUrl: string;
  readonly version: string;
  /** Whether the admin API is enabled (SCOUR_ADMIN_TOKEN set). */
  readonly adminEnabled: boolean;
}

export interface OperationPlugin<N extends string = string> extends PluginBase<N, 'operation'> {
  routes(host: PluginHost): readonly Route<any, any>[];
}

export interface ToolContext {
  readonly requestId: string;
  readonly clientIp: string;
  /** Aborted when the client goes away or the server gives up on the request. */
  readonly signal?: AbortSignal;
}

export interface ToolPlugin<N extends string = string, Req = any, Res = any> extends PluginBase<N, 'tool'> {
  /** URL segment: POST /v1/tools/{slug}. */
  readonly slug: string;
  readonly summary: string;
  readonly request: Schema<Req>;
  readonly response: Schema<Res>;
  /** A worked example for the docs: a request and the response it gives. */
  readonly example?: { readonly request: Req; readonly response?: Partial<Res> };
  /**
   * The checks JSON Schema cannot express (a field that only applies with
   * another, min over max), run by the validate stage with the schema, so
   * one 400 lists both. What only running the tool can find (input it
   * cannot decode) stays in `run`.
   */
  readonly check?: SemanticCheck<Req>;
  /** Synchronous, or a Promise for tools that run off-thread. Throw BadRequest for semantic 400s. */
  run(input: Req, ctx: ToolContext): Res | Promise<Res>;
}

export type AnyPlugin = PluginBase<string, PluginKind> & Record<string, unknown>;

export interface PluginLookup {
  get(name: string): AnyPlugin | undefined;
  byKind(kind: 'operation'): readonly OperationPlugin[];
  byKind(kind: 'tool'): readonly ToolPlugin[];
  byKind(kind: PluginKind): readonly AnyPlugin[];
}

/** Identity helper that keeps literal names and kinds. */
export const definePlugin = <const P extends PluginBase>(plugin: P): P => plugin;
