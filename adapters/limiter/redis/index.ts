/**
 * Shared RateLimiter on Redis: the same semantics as the memory adapter, but
 * every API process that points at one Redis shares one limit exactly. Each
 * call is one Lua script (EVALSHA through ioredis `defineCommand`), so the
 * check-then-count is atomic across processes. Times come from the caller
 * (never Redis TIME) so decisions agree with the request's clock. Limits
 * fail closed: a Redis error is a ServiceUnavailable, except on release,
 * where the lease bounds the damage.
 */
import { Effect } from 'effect';
import { Redis } from 'ioredis';
import { ServiceUnavailable } from '../../../core/errors.js';
import type { Admission, Disposable, RateDecision, RateLimiter, RateRule, SlotDecision, SlotRequest } from '../../../core/ports.js';
import { bindingDecision, noRules } from '../memory/index.js';

export interface RedisRateLimiterOptions {
  /** redis://... ; ignored when `client` is given. Default redis://127.0.0.1:6379. */
  readonly url?: string;
  /** A client owned by the caller (not closed by `close()`, its options left as they are). */
  readonly client?: Redis;
  /** Prefix of every key this limiter writes. Default 'scour:'. */
  readonly keyPrefix?: string;
}

/** Keys outlive their window (or lease) by this much, so a slow clock never reads a missing key as a fresh one. */
const SLACK_MS = 1000;
const CONNECT_TIMEOUT_MS = 2000;
/** A hung Redis must not hold requests: commands give up after this. */
const COMMAND_TIMEOUT_MS = 1000;

/**
 * KEYS: one window key per rule. ARGV: limit_i, ttlMs_i per rule.
 * Returns {allowed (1/0), count_1, ..., count_n}: counts after the hit when
 * allowed, as found when denied (denied hits are not counted). Rules that
 * share a window key count the hit once.
 */
const HIT_LUA = `
local n = #KEYS
local counts = {}
local ok = 1
for i = 1, n do
  local c = tonumber(redis.call('GET', KEYS[i]) or '0')
  counts[i] = c
  if c >= tonumber(ARGV[2 * i - 1]) then ok = 0 end
end
if ok == 1 then
  local done = {}
  for i = 1, n do
    local k = KEYS[i]
    if done[k] == nil then
      local c = redis.call('INCR', k)
      if c == 1 then redis.call('PEXPIRE', k, ARGV[2 * i]) end
      done[k] = c
    end
    counts[i] = done[k]
  end
end
table.insert(counts, 1, ok)
return counts
`;

/**
 * KEYS[1]: the slot set (member token, score lease expiry).
 * ARGV: token, max, now, expiry, ttlMs. Returns {acquired (1/0), active}.
 * A token already holding a slot renews its lease.
 */
const ACQUIRE_LUA = `
local key = KEYS[1]
redis.call('ZREMRANGEBYSCORE', key, '-inf', ARGV[3])
local held = redis.call('ZSCORE', key, ARGV[1])
local n = redis.call('ZCARD', key)
if held or n < tonumber(ARGV[2]) then
  redis.call('ZADD', key, ARGV[4], ARGV[1])
  if not held then n = n + 1 end
  if redis.call('PTTL', key) < tonumber(ARGV[5]) then redis.call('PEXPIRE', key, ARGV[5]) end
  return {1, n}
end
return {0, n}
`;

/**
 * HIT_LUA and ACQUIRE_LUA in one script, so a request's rate check is one
 * round trip. KEYS: the window keys, then the slot set when a slot is asked
 * for. ARGV[1]: the number of window keys n; ARGV[2 .. 2n+1]: limit_i,
 * ttlMs_i; then, for a slot, token, max, now, expiry, ttlMs. Returns
 * {allowed, count_1 .. count_n} and, when allowed and a slot was asked for,
 * {acquired, active} after them.
 */
const ADMIT_LUA = `
local n = tonumber(ARGV[1])
local counts = {}
local ok = 1
for i = 1, n do
  local c = tonumber(redis.call('GET', KEYS[i]) or '0')
  counts[i] = c
  if c >= tonumber(ARGV[2 * i]) then ok = 0 end
end
if ok == 1 then
  local done = {}
  for i = 1, n do
    local k = KEYS[i]
    if done[k] == nil then
      local c = redis.call('INCR', k)
      if c == 1 then redis.call('PEXPIRE', k, ARGV[2 * i + 1]) end
      done[k] = c
    end
    counts[i] = done[k]
  end
end
table.insert(counts, 1, ok)
if ok == 1 and #KEYS > n then
  local key = KEYS[n + 1]
  local b = 2 * n + 1
  local token = ARGV[b + 1]
  redis.call('ZREMRANGEBYSCORE', key, '-inf', ARGV[b + 3])
  local held = redis.call('ZSCORE', key, token)
  local m = redis.call('ZCARD', key)
  if held or m < tonumber(ARGV[b + 2]) then
    redis.call('ZADD', key, ARGV[b + 4], token)
    if not held then m = m + 1 end
    if redis.call('PTTL', key) < tonumber(ARGV[b + 5]) then redis.call('PEXPIRE', key, ARGV[b + 5]) end
    table.insert(counts, 1)
  else
    table.insert(counts, 0)
  end
  table.insert(counts, m)
end
return counts
`;

interface LimiterCommands {
  scourAdmit(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
  scourRateHit(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
  scourSlotAcquire(key: string, token: string, max: number, now: number, expiry: number, ttlMs: number): Promise<number[]>;
}

const unavailable = (): ServiceUnavailable => new ServiceUnavailable({ message: 'Rate limiter unavailable', retryAfter: 1 });

export class RedisRateLimiter implements RateLimiter, Disposable {
  private readonly client: Redis;
  private readonly commands: LimiterCommands;
  private readonly owned: boolean;
  private readonly prefix: string;
  private readonly url: string;

  constructor(options: RedisRateLimiterOptions = {}) {
    this.prefix = options.keyPrefix ?? 'scour:';
    this.url = options.url ?? 'redis://127.0.0.1:6379';
    this.owned = options.client === undefined;
    this.client = options.client ?? new Redis(this.url, {
      lazyConnect: true,
      connectTimeout: CONNECT_TIMEOUT_MS,
      commandTimeout: COMMAND_TIMEOUT_MS,
      maxRetriesPerRequest: 1,
    });
    // Errors reach callers through the failed commands; without a listener ioredis prints them.
    if (this.owned) this.client.on('error', () => {});
    this.client.defineCommand('scourRateHit', { lua: HIT_LUA });
    this.client.defineCommand('scourSlotAcquire', { lua: ACQUIRE_LUA, numberOfKeys: 1 });
    this.client.defineCommand('scourAdmit', { lua: ADMIT_LUA });
    this.commands = this.client as unknown as LimiterCommands;
  }

  /** Connect (or wait for the given client to be ready); rejects within ~2 s when Redis cannot be reached. */
  async connect(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
    });
    try {
      const ready = this.client.status === 'wait' ? this.client.connect() : this.client.ping();
      await Promise.race([ready, timeout]);
      // Connected: from now on a command sent while disconnected fails at once instead of queueing.
      if (this.owned) this.client.options.enableOfflineQueue = false;
    } catch (e) {
      if (this.owned) this.client.disconnect();
      const where = this.owned ? this.url.replace(/\/\/[^@/]*@/, '//***@') : 'the given client';
      throw new Error(`Redis rate limiter: cannot reach Redis at ${where}: ${(e as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (!this.owned) return;
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }

  dispose(): Promise<void> {
    return this.close();
  }

  /** Each rule's window at `now`: its key, its script arguments (limit, key TTL) and when it ends. */
  private windows(key: string, rules: readonly RateRule[], now: number): { keys: string[]; args: number[]; ends: number[] } {
    const keys: string[] = [];
    const args: number[] = [];
    const ends: number[] = [];
    for (const r of rules) {
      const windowMs = r.windowSeconds * 1000;
      const start = now - (now % windowMs);
      const end = start + windowMs;
      keys.push(`${this.prefix}rl:${key}:${r.windowSeconds}:${start}`);
      args.push(r.limit, end - now + SLACK_MS);
      ends.push(end);
    }
    return { keys, args, ends };
  }

  hit(key: string, rules: readonly RateRule[], now: number): Effect.Effect<RateDecision, ServiceUnavailable> {
    if (rules.length === 0) return Effect.succeed(noRules(now));
    const { keys, args, ends } = this.windows(key, rules, now);
    return Effect.tryPromise({
      try: () => this.commands.scourRateHit(keys.length, ...keys, ...args).then((reply) => {
        const allowed = reply[0] === 1;
        return bindingDecision(rules, reply.slice(1).map(Number), ends, allowed, now);
      }),
      catch: unavailable,
    });
  }

  acquire(key: string, token: string, max: number, leaseMs: number, now: number): Effect.Effect<SlotDecision, ServiceUnavailable> {
    if (max <= 0) return Effect.succeed({ acquired: true, active: 0, max });
    return Effect.tryPromise({
      try: () => this.commands.scourSlotAcquire(`${this.prefix}cc:${key}`, token, max, now, now + leaseMs, leaseMs + SLACK_MS)
        .then((reply): SlotDecision => ({ acquired: reply[0] === 1, active: Number(reply[1]), max })),
      catch: unavailable,
    });
  }

  admit(key: string, rules: readonly RateRule[], slot: SlotRequest | undefined, now: number): Effect.Effect<Admission, ServiceUnavailable> {
    const wantSlot = slot !== undefined && slot.max > 0;
    if (rules.length === 0 && !wantSlot) return Effect.succeed({ decision: noRules(now), slot: undefined });
    const { keys, args: windowArgs, ends } = this.windows(key, rules, now);
    const args: (string | number)[] = [rules.length, ...windowArgs];
    if (wantSlot) {
      keys.push(`${this.prefix}cc:${key}`);
      args.push(slot.token, slot.max, now, now + slot.leaseMs, slot.leaseMs + SLACK_MS);
    }
    const n = rules.length;
    return Effect.tryPromise({
      try: () => this.commands.scourAdmit(keys.length, ...keys, ...args).then((reply): Admission => {
        const allowed = reply[0] === 1;
        const counts = new Array<number>(n);
        for (let i = 0; i < n; i++) counts[i] = Number(reply[i + 1]);
        const decision = n === 0 ? noRules(now) : bindingDecision(rules, counts, ends, allowed, now);
        const granted = allowed && wantSlot ? { acquired: reply[n + 1] === 1, active: Number(reply[n + 2]), max: slot.max } : undefined;
        return { decision, slot: granted };
      }),
      catch: unavailable,
    });
  }

  release(key: string, token: string): Effect.Effect<void> {
    return Effect.promise(() => this.client.zrem(`${this.prefix}cc:${key}`, token).then(() => undefined, () => undefined));
  }
}
