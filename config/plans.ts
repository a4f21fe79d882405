/**
 * Plans and their limits as data: the spec's two limit tables (8.1 for
 * search, 8.2 for scrape and research) reconciled, the monthly credit
 * allowances (not in the spec; chosen here), and the plan-gated features.
 * `SCOUR_PLANS` names a JSON file that overrides any of it (see
 * `loadPlanOverrides`); docs/accounts-and-credits.md ("Plans and limits") shows the
 * defaults and the file format.
 */
import { readFileSync } from 'node:fs';
import { PLAN_IDS, type PlanId } from '../core/accounts.js';
import type { RateRule } from '../core/ports.js';
import type { Feature } from '../core/stages/index.js';
import type { PlanBook } from '../core/stages/account.js';
import { ConfigError } from './env.js';

export interface OperationLimits {
  /** Every window must admit a request (e.g. per minute and per hour). */
  readonly windows: readonly RateRule[];
  /** Requests of this operation in flight at once; 0 for no limit. */
  readonly concurrency: number;
}

export interface Plan {
  readonly id: PlanId;
  readonly name: string;
  /** Order of plans for gating: a feature needs a plan of at least this rank. */
  readonly rank: number;
  /** Credits each billing period refills the balance to (see docs/accounts-and-credits.md: periods). */
  readonly monthlyCredits: number;
  /** Limits by operation (`search`, `scrape`, `research`, `usage`, ...); `default` covers the rest. */
  readonly limits: Readonly<Record<string, OperationLimits>> & { readonly default: OperationLimits };
}

export type Plans = Readonly<Record<PlanId, Plan>>;

const MIN = 60;
const HOUR = 3600;
const DAY = 24 * HOUR;
const w = (limit: number, windowSeconds: number): RateRule => ({ limit, windowSeconds });

/**
 * Search follows table 8.1 (per hour, per minute, concurrent). Scrape and
 * research follow table 8.2 per minute: Free at Free, Starter and Builder at
 * Pro, Unicorn at Enterprise ("custom": five times Pro here, configurable);
 * their concurrency is the plan's from table 8.1. Usage is not in the spec:
 * a generous per-minute limit so dashboards can poll it. Crawl (an
 * extension) counts submissions of POST /v1/crawl, per minute and per day:
 * one submission can fetch up to 10,000 pages, which are billed per page.
 */
export const DEFAULT_PLANS: Plans = {
  free: {
    id: 'free', name: 'Free', rank: 0, monthlyCredits: 100,
    limits: {
      search: { windows: [w(1, MIN), w(10, HOUR)], concurrency: 1 },
      scrape: { windows: [w(5, MIN)], concurrency: 1 },
      research: { windows: [w(2, MIN)], concurrency: 1 },
      crawl: { windows: [w(2, MIN), w(20, DAY)], concurrency: 1 },
      usage: { windows: [w(60, MIN)], concurrency: 0 },
      default: { windows: [w(5, MIN)], concurrency: 1 },
    },
  },
  starter: {
    id: 'starter', name: 'Starter', rank: 1, monthlyCredits: 5_000,
    limits: {
      search: { windows: [w(50, MIN), w(1_000, HOUR)], concurrency: 5 },
      scrape: { windows: [w(50, MIN)], concurrency: 5 },
      research: { windows: [w(20, MIN)], concurrency: 5 },
      crawl: { windows: [w(10, MIN), w(200, DAY)], concurrency: 5 },
      usage: { windows: [w(300, MIN)], concurrency: 0 },
      default: { windows: [w(50, MIN)], concurrency: 5 },
    },
  },
  builder: {
    id: 'builder', name: 'Builder', rank: 2, monthlyCredits: 25_000,
    limits: {
      search: { windows: [w(100, MIN), w(5_000, HOUR)], concurrency: 10 },
      scrape: { windows: [w(50, MIN)], concurrency: 10 },
      research: { windows: [w(20, MIN)], concurrency: 10 },
      crawl: { windows: [w(20, MIN), w(1_000, DAY)], concurrency: 10 },
      usage: { windows: [w(600, MIN)], concurrency: 0 },
      default: { windows: [w(100, MIN)], concurrency: 10 },
    },
  },
  unicorn: {
    id: 'unicorn', name: 'Unicorn', rank: 3, monthlyCredits: 100_000,
    limits: {
      search: { windows: [w(500, MIN), w(20_000, HOUR)], concurrency: 25 },
      scrape: { windows: [w(250, MIN)], concurrency: 25 },
      research: { windows: [w(100, MIN)], concurrency: 25 },
      crawl: { windows: [w(60, MIN), w(5_000, DAY)], concurrency: 25 },
      usage: { windows: [w(1_200, MIN)], concurrency: 0 },
      default: { windows: [w(500, MIN)], concurrency: 25 },
    },
  },
};

/** The lowest plan that includes each gated feature (spec rule 3). */
export const FEATURE_MIN_PLAN: Readonly<Record<string, PlanId>> = {
  contacts: 'starter',
  social: 'builder',
};

export const limitsFor = (plan: Plan, operation: string): OperationLimits => plan.limits[operation] ?? plan.limits.default;

/** The lowest plan that includes `feature` (free when the feature is not gated). */
export const minPlanFor = (feature: Feature): PlanId => FEATURE_MIN_PLAN[feature] ?? 'free';

/**
 * Overrides, as JSON: `{ "<plan>": { "monthly_credits": n, "limits": { "<operation>": {
 * "per_minute": n, "per_hour": n, "per_day": n, "windows": [{ "limit": n, "seconds": n }],
 * "concurrency": n } } } }`. Any part may be left out; an operation's
 * windows given here replace that operation's default windows.
 */
export function applyPlanOverrides(base: Plans, raw: unknown, source = 'SCOUR_PLANS'): Plans {
  const issues: string[] = [];
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const count = (v: unknown, where: string, min: number): number | undefined => {
    if (typeof v === 'number' && Number.isInteger(v) && v >= min && v <= 1_000_000_000) return v;
    issues.push(`${source}: ${where} must be an integer from ${min} to 1000000000`);
    return undefined;
  };
  if (!isObj(raw)) throw new ConfigError([`${source}: must be a JSON object keyed by plan (${PLAN_IDS.join(', ')})`]);
  const out: Record<string, Plan> = { ...base };
  for (const [planId, o] of Object.entries(raw)) {
    if (!(PLAN_IDS as readonly string[]).includes(planId)) {
      issues.push(`${source}: unknown plan ${JSON.stringify(planId)} (plans: ${PLAN_IDS.join(', ')})`);
      continue;
    }
    if (!isObj(o)) {
      issues.push(`${source}: ${planId} must be an object`);
      continue;
    }
    const plan = base[planId as PlanId];
    let monthlyCredits = plan.monthlyCredits;
    const limits: Record<string, OperationLimits> = { ...plan.limits };
    for (const [k, v] of Object.entries(o)) {
      if (k === 'monthly_credits') {
        monthlyCredits = count(v, `${planId}.monthly_credits`, 0) ?? monthlyCredits;
      } else if (k === 'limits') {
        if (!isObj(v)) {
          issues.push(`${source}: ${planId}.limits must be an object keyed by operation`);
          continue;
        }
        for (const [op, l] of Object.entries(v)) {
          const where = `${planId}.limits.${op}`;
          if (!/^[a-z][a-z0-9_-]{0,63}$/.test(op) || !isObj(l)) {
            issues.push(`${source}: ${where} must be an object under a lower-case operation name`);
            continue;
          }
          const prior = limits[op] ?? limits.default!;
          const windows: RateRule[] = [];
          let concurrency = prior.concurrency;
          for (const [lk, lv] of Object.entries(l)) {
            if (lk === 'per_minute' || lk === 'per_hour' || lk === 'per_day') {
              const n = count(lv, `${where}.${lk}`, 1);
              if (n !== undefined) windows.push({ limit: n, windowSeconds: lk === 'per_minute' ? MIN : lk === 'per_hour' ? HOUR : 24 * HOUR });
            } else if (lk === 'windows' && Array.isArray(lv)) {
              lv.forEach((x, i) => {
                if (!isObj(x)) return void issues.push(`${source}: ${where}.windows[${i}] must be { "limit", "seconds" }`);
                const limit = count(x.limit, `${where}.windows[${i}].limit`, 1);
                const seconds = count(x.seconds, `${where}.windows[${i}].seconds`, 1);
                if (limit !== undefined && seconds !== undefined) windows.push({ limit, windowSeconds: seconds });
              });
            } else if (lk === 'concurrency') {
              concurrency = count(lv, `${where}.concurrency`, 0) ?? concurrency;
            } else {
              issues.push(`${source}: ${where}.${lk} is not a limit (per_minute, per_hour, per_day, windows, concurrency)`);
            }
          }
          const seen = new Set<number>();
          for (const r of windows) {
            if (seen.has(r.windowSeconds)) issues.push(`${source}: ${where} gives the ${r.windowSeconds}-second window twice`);
            seen.add(r.windowSeconds);
          }
          limits[op] = { windows: windows.length > 0 ? windows : prior.windows, concurrency };
        }
      } else {
        issues.push(`${source}: ${planId}.${k} is not a plan setting (monthly_credits, limits)`);
      }
    }
    out[planId] = { ...plan, monthlyCredits, limits: limits as Plan['limits'] };
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return out as Plans;
}

/** Read the SCOUR_PLANS file, if any, over the defaults. */
export function loadPlans(path: string | undefined): Plans {
  if (path === undefined) return DEFAULT_PLANS;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError([`SCOUR_PLANS: cannot read ${path}: ${(e as Error).message}`]);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ConfigError([`SCOUR_PLANS: ${path} is not valid JSON: ${(e as Error).message}`]);
  }
  return applyPlanOverrides(DEFAULT_PLANS, raw);
}

/** The stages' view of the plans (core/stages/account.ts PlanBook). */
export function planBook(plans: Plans): PlanBook {
  return {
    monthlyCredits: (p) => plans[p].monthlyCredits,
    limits: (p, op) => limitsFor(plans[p], op),
    name: (p) => plans[p].name,
    allows(p, feature) {
      const min = minPlanFor(feature);
      return plans[p].rank >= plans[min].rank ? true : { minPlan: min, field: FEATURE_FIELD[feature] ?? feature };
    },
  };
}

/** The request field that asks for each gated feature (for the 403 message). */
export const FEATURE_FIELD: Readonly<Record<string, string>> = {
  contacts: 'include_contacts',
  social: 'include_social',
};
