/**
 * `scour accounts|keys|credits|webhooks`: account administration from the
 * shell, straight on the configured store (SQLite file or DATABASE_URL), so
 * it works with or without the server running and needs no admin token.
 * `--json` prints the same shapes as the admin API.
 */
import { Effect, Exit, Cause } from 'effect';
import { type AccountAdmin, DEFAULT_WEBHOOK_GRACE_SECONDS, MAX_WEBHOOK_GRACE_SECONDS, type WebhookSecretView } from '../../core/account-admin.js';
import type { JobStore } from '../../core/jobs.js';
import { PLAN_IDS, type PlanId } from '../../core/accounts.js';
import { isApiFailure } from '../../core/errors.js';
import { type Args, type ArgSpec, cliArgs } from './args.js';
import { CommandError, UsageError } from './errors.js';

export const ACCOUNTS_HELP = `Account administration (on the store named by DATABASE_URL, else the SQLite file in SCOUR_DATA_DIR):
  scour accounts create --plan <free|starter|builder|unicorn> [--credits N] [--name TEXT] [--json]
  scour accounts list [--json]
  scour accounts show <account_id> [--json]
  scour accounts set-plan <account_id> --plan <plan> [--json]
  scour keys create --account <account_id> [--name TEXT] [--expires-at ISO-8601] [--json]
  scour keys list --account <account_id> [--json]
  scour keys revoke <key_id> [--json]
  scour credits add --account <account_id> --amount N [--json]
  scour webhooks show --account <account_id> [--json]        (made now if the account has none yet)
  scour webhooks rotate --account <account_id> [--grace SECONDS] [--json]
                       (the old secret keeps signing for --grace seconds, 0 to ${MAX_WEBHOOK_GRACE_SECONDS}; default ${DEFAULT_WEBHOOK_GRACE_SECONDS})
`;

/** The options of the admin and index commands (each command reads the ones it needs). */
export const ADMIN_OPTIONS: ArgSpec = { values: ['plan', 'credits', 'name', 'account', 'amount', 'expires-at', 'grace', 'collection'], flags: ['json'] };

type Parsed = Args;

const str = (p: Parsed, name: string, required: boolean): string | undefined => {
  const v = p.values.get(name);
  if (v === undefined && required) throw new UsageError(`--${name} is required`);
  return v;
};

const plan = (p: Parsed): PlanId => {
  const v = str(p, 'plan', true)!;
  if (!(PLAN_IDS as readonly string[]).includes(v)) throw new UsageError(`--plan must be one of ${PLAN_IDS.join(', ')} (got ${JSON.stringify(v)})`);
  return v as PlanId;
};

const int = (p: Parsed, name: string, required: boolean, min: number): number | undefined => {
  const v = str(p, name, required);
  if (v === undefined) return undefined;
  if (!/^\d{1,10}$/.test(v) || Number(v) < min || Number(v) > 1_000_000_000) throw new UsageError(`--${name} must be a whole number from ${min} to 1000000000 (got ${JSON.stringify(v)})`);
  return Number(v);
};

const grace = (p: Parsed): number => {
  const v = str(p, 'grace', false);
  if (v === undefined) return DEFAULT_WEBHOOK_GRACE_SECONDS;
  if (!/^\d{1,7}$/.test(v) || Number(v) > MAX_WEBHOOK_GRACE_SECONDS) throw new UsageError(`--grace must be a whole number of seconds from 0 to ${MAX_WEBHOOK_GRACE_SECONDS} (got ${JSON.stringify(v)})`);
  return Number(v);
};

/** A webhook secret for people: the secret on its own line, then its times. */
const secretText = (w: WebhookSecretView, rotated: boolean): string => [
  `account ${w.account_id}`,
  `secret  ${w.secret}`,
  `since   ${w.created_at}`,
  w.previous_secret_expires_at !== null
    ? `the previous secret also signs webhooks until ${w.previous_secret_expires_at}`
    : rotated ? 'the previous secret no longer signs webhooks' : '',
].filter((line) => line !== '').join('\n') + '\n';

const one = (p: Parsed, what: string): string => {
  if (p.positional.length !== 1) throw new UsageError(`expected exactly one ${what}`);
  return p.positional[0]!;
};

/** Run an Effect; API failures (not found, bad input) become thrown errors with their message. */
async function run<A>(e: Effect.Effect<A, unknown>): Promise<A> {
  const exit = await Effect.runPromiseExit(e);
  if (Exit.isSuccess(exit)) return exit.value;
  const err = Cause.squash(exit.cause);
  if (isApiFailure(err)) {
    const issues = (err.fields().validation_errors as { field: string; message: string }[] | undefined) ?? [];
    throw new CommandError(issues.length > 0 ? issues.map((i) => `${i.field} ${i.message}`).join('; ') : err.message);
  }
  throw err;
}

/**
 * Parse and check one command line (throws UsageError), before anything
 * opens the store; returns the work to run against it, which returns the
 * text to print.
 */
export function accountsCommand(group: string, argv: readonly string[]): (admin: AccountAdmin, jobs: JobStore) => Promise<string> {
  const [sub, ...rest] = argv;
  const p = cliArgs(rest, ADMIN_OPTIONS);
  const json = p.flags.has('json');
  const out = (value: unknown, text: string) => (json ? `${JSON.stringify(value, null, 2)}\n` : text);
  const none = (what: string) => {
    if (p.positional.length > 0) throw new UsageError(`${what} takes no positional arguments`);
  };

  const key = `${group} ${sub ?? ''}`;
  switch (key) {
    case 'accounts create': {
      none('accounts create');
      const credits = int(p, 'credits', false, 0);
      const chosen = plan(p);
      const name = str(p, 'name', false) ?? null;
      return async (admin) => {
        const { account, key: k } = await run(admin.createAccount({ plan: chosen, credits, name }));
        const v = admin.viewAccount(account);
        const body = { account_id: account.id, api_key: k.apiKey, key_id: k.record.id, plan: account.plan, credits_remaining: v.credits_remaining, reset_date: v.reset_date };
        return out(body, `account ${account.id} (${account.plan}, ${v.credits_remaining} credits)\nkey id  ${k.record.id}\nAPI key ${k.apiKey}\n(shown once: store it now)\n`);
      };
    }
    case 'accounts list':
      none('accounts list');
      return async (admin) => {
        const list = (await run(admin.listAccounts())).map((a) => admin.viewAccount(a));
        return out({ accounts: list }, list.length === 0 ? 'no accounts\n' : list.map((a) => `${a.account_id}  ${a.plan.padEnd(8)} ${String(a.credits_remaining).padStart(10)} credits  ${a.name ?? ''}\n`).join(''));
      };
    case 'accounts show': {
      const id = one(p, 'account id');
      return async (admin) => {
        const a = await run(admin.requireAccount(id));
        const keys = (await run(admin.listKeys(a.id))).map((k) => admin.viewKey(k));
        const usage = await run(admin.usage(a));
        const v = admin.viewAccount(a);
        const text = [
          `account   ${v.account_id}${v.name ? ` (${v.name})` : ''}`,
          `plan      ${v.plan} (${v.monthly_credits} credits a month)`,
          `credits   ${v.credits_remaining} remaining, ${v.credits_reserved} reserved`,
          `period    ${v.period_start} to ${v.reset_date}`,
          `keys      ${keys.length === 0 ? 'none' : ''}`,
          ...keys.map((k) => `  ${k.key_id}  ${k.prefix}...  ${k.status}${k.expires_at ? ` (expires ${k.expires_at})` : ''}  ${k.name ?? ''}`),
          `usage     ${usage.length === 0 ? 'none this period' : ''}`,
          ...usage.map((u) => `  ${u.operation}: ${u.credits} credits, ${u.requests} requests`),
        ].join('\n');
        return out({ ...v, keys, breakdown: usage }, `${text}\n`);
      };
    }
    case 'accounts set-plan': {
      const id = one(p, 'account id');
      const chosen = plan(p);
      return async (admin) => {
        const a = await run(admin.setPlan(id, chosen));
        return out(admin.viewAccount(a), `account ${a.id} is now on ${a.plan}\n`);
      };
    }
    case 'keys create': {
      none('keys create');
      const raw = str(p, 'expires-at', false);
      const expiresAt = raw === undefined ? null : Date.parse(raw);
      if (expiresAt !== null && (Number.isNaN(expiresAt) || !/^\d{4}-\d{2}-\d{2}/.test(raw!))) throw new UsageError(`--expires-at must be an ISO 8601 date-time (got ${JSON.stringify(raw)})`);
      const account = str(p, 'account', true)!;
      const name = str(p, 'name', false) ?? null;
      return async (admin) => {
        const k = await run(admin.issueKey(account, { name, expiresAt }));
        const body = { key_id: k.record.id, api_key: k.apiKey, account_id: k.record.accountId, prefix: k.record.prefix, expires_at: k.record.expiresAt === null ? null : new Date(k.record.expiresAt).toISOString() };
        return out(body, `key id  ${k.record.id}\nAPI key ${k.apiKey}\n(shown once: store it now)\n`);
      };
    }
    case 'keys list': {
      none('keys list');
      const account = str(p, 'account', true)!;
      return async (admin) => {
        const keys = (await run(admin.listKeys(account))).map((k) => admin.viewKey(k));
        return out({ keys }, keys.length === 0 ? 'no keys\n' : keys.map((k) => `${k.key_id}  ${k.prefix}...  ${k.status.padEnd(7)}  ${k.name ?? ''}\n`).join(''));
      };
    }
    case 'keys revoke': {
      const id = one(p, 'key id');
      return async (admin) => {
        const k = admin.viewKey(await run(admin.revokeKey(id)));
        return out(k, `key ${k.key_id} revoked at ${k.revoked_at}\n`);
      };
    }
    case 'credits add': {
      none('credits add');
      const account = str(p, 'account', true)!;
      const amount = int(p, 'amount', true, 1)!;
      return async (admin) => {
        const a = await run(admin.addCredits(account, amount));
        const v = admin.viewAccount(a);
        return out(v, `account ${a.id} now has ${v.credits_remaining} credits\n`);
      };
    }
    case 'webhooks show': {
      none('webhooks show');
      const account = str(p, 'account', true)!;
      return async (admin, jobs) => {
        const w = await run(admin.webhookSecret(jobs, account));
        return out(w, secretText(w, false));
      };
    }
    case 'webhooks rotate': {
      none('webhooks rotate');
      const account = str(p, 'account', true)!;
      const seconds = grace(p);
      return async (admin, jobs) => {
        const w = await run(admin.rotateWebhookSecret(jobs, account, seconds));
        return out(w, secretText(w, true));
      };
    }
    default:
      throw new UsageError(`unknown command: scour ${key.trim()}`);
  }
}
