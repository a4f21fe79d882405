/**
 * The key cache's invalidation bus on Redis pub/sub: one channel
 * (`<SCOUR_REDIS_PREFIX>key-invalidations`), messages are account ids. One
 * connection subscribes (a subscribed Redis connection can do nothing
 * else), another publishes. `live` is true only while the subscription is
 * confirmed: when the connection drops the cache stops being used and is
 * emptied (onReset), and when it is back and subscribed again it is emptied
 * once more, since messages sent meanwhile were lost.
 */
import { Redis } from 'ioredis';
import type { InvalidationBus } from './index.js';

export interface RedisInvalidationBusOptions {
  /** redis://... */
  readonly url: string;
  /** Prefix of the channel name (SCOUR_REDIS_PREFIX). */
  readonly prefix: string;
  /** Publish only (the CLI): no subscription, never live. */
  readonly publishOnly?: boolean;
}

const CONNECT_TIMEOUT_MS = 2000;
const COMMAND_TIMEOUT_MS = 1000;

export class RedisInvalidationBus implements InvalidationBus {
  readonly channel: string;
  private readonly pub: Redis;
  private readonly sub: Redis | undefined;
  private subscribed = false;
  private closed = false;
  private onMessage: (accountId: string) => void = () => {};
  private onReset: () => void = () => {};

  constructor(private readonly options: RedisInvalidationBusOptions) {
    this.channel = `${options.prefix}key-invalidations`;
    this.pub = new Redis(options.url, { lazyConnect: true, connectTimeout: CONNECT_TIMEOUT_MS, commandTimeout: COMMAND_TIMEOUT_MS, maxRetriesPerRequest: 1 });
    this.pub.on('error', () => {});
    if (options.publishOnly === true) return;
    const sub = (this.sub = new Redis(options.url, { lazyConnect: true, connectTimeout: CONNECT_TIMEOUT_MS, autoResubscribe: false }));
    sub.on('error', () => {});
    sub.on('message', (channel: string, message: string) => {
      if (channel === this.channel) this.onMessage(message);
    });
    const down = () => {
      if (!this.subscribed) return;
      this.subscribed = false;
      this.onReset();
    };
    sub.on('close', down);
    sub.on('end', down);
    sub.on('reconnecting', down);
    // After a reconnection: subscribe again, and only then use the cache (emptied: messages were missed).
    sub.on('ready', () => {
      if (this.closed || this.subscribed) return;
      sub.subscribe(this.channel).then(() => {
        if (this.closed) return;
        this.onReset();
        this.subscribed = true;
      }, () => {});
    });
  }

  get live(): boolean {
    return this.subscribed && this.sub?.status === 'ready';
  }

  listen(onMessage: (accountId: string) => void, onReset: () => void): void {
    this.onMessage = onMessage;
    this.onReset = onReset;
  }

  /** Connect both connections and subscribe; rejects within ~2 s when Redis cannot be reached. */
  async connect(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
    });
    try {
      const ready = async () => {
        await this.pub.connect();
        if (this.sub !== undefined) {
          await this.sub.connect();
          await this.sub.subscribe(this.channel);
          this.subscribed = true;
        }
      };
      await Promise.race([ready(), timeout]);
    } catch (e) {
      this.pub.disconnect();
      this.sub?.disconnect();
      throw new Error(`Key cache: cannot reach Redis at ${this.options.url.replace(/\/\/[^@/]*@/, '//***@')}: ${(e as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  }

  async publish(accountId: string): Promise<void> {
    await this.pub.publish(this.channel, accountId);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.subscribed = false;
    for (const c of [this.pub, this.sub]) {
      if (c === undefined) continue;
      try {
        await c.quit();
      } catch {
        c.disconnect();
      }
    }
  }
}
