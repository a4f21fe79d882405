/**
 * A small pool of fresh, never-used, single-use resources made ahead of
 * need (for the browser fetcher: a new browser context with its page and its
 * unbound egress proxy). take() hands one out for good: the taker uses it
 * once and closes it. When none is ready but one is being made, take()
 * reserves that one (it is further along than a new one would be).
 *
 * Making an entry is expensive (a browser context with its page costs a
 * renderer process: about 0.5 s of CPU here), so entries are made one at a
 * time, and only when fill() is called: the fetcher calls it once a render
 * has answered, so a refill does not compete with the render that caused it.
 * An entry that dies while it waits (its renderer crashed, its browser went
 * away) is dropped, closed and replaced. Failed creations back off (1 s,
 * doubling to 30 s) so a broken browser is not hammered. drain() closes
 * what is ready and stops refilling until the next fill(); close() is for
 * good and also closes whatever is still being made.
 */

export interface Fresh {
  /** False once it died on its own (crash, browser gone). */
  readonly alive: boolean;
  /** Called (at most once) when it dies on its own. */
  onDeath(listener: () => void): void;
  close(): Promise<void>;
}

const MAX_BACKOFF_MS = 30_000;

export class WarmPool<T extends Fresh> {
  private readonly ready: T[] = [];
  private creating = 0;
  /** Takers waiting for the entries being made (each gets one, or undefined if it fails). */
  private readonly reserved: ((t: T | undefined) => void)[] = [];
  /** Refilling allowed (false after drain() until the next fill()). */
  private active = false;
  private closed = false;
  private backoffMs = 0;
  private retryAt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private lastError: unknown;
  private readonly pending = new Set<Promise<void>>();
  private readonly waiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];

  constructor(private readonly size: number, private readonly create: () => Promise<T>) {}

  /** Entries ready to be taken. */
  get readyCount(): number { return this.ready.length; }

  /** Entries being made. */
  get creatingCount(): number { return this.creating; }

  /**
   * A ready entry, or the one being made (resolves to undefined if making it
   * fails), now the caller's to close; undefined when there is neither.
   */
  take(): Promise<T | undefined> | undefined {
    for (let t = this.ready.shift(); t !== undefined; t = this.ready.shift()) {
      if (t.alive) return Promise.resolve(t);
      void t.close().catch(() => undefined);
    }
    if (this.creating > this.reserved.length) return new Promise((resolve) => this.reserved.push(resolve));
    return undefined;
  }

  /** Make entries, one at a time, until `size` are ready or being made (after a failure, once the back-off has passed). */
  fill(): void {
    if (this.closed || this.size <= 0) return;
    this.active = true;
    const wait = this.retryAt - Date.now();
    if (wait > 0) {
      this.retryTimer ??= setTimeout(() => {
        this.retryTimer = undefined;
        if (this.active) this.fill();
      }, wait);
      this.retryTimer.unref();
      return;
    }
    if (this.creating === 0 && this.ready.length + this.creating - this.reserved.length < this.size) this.spawn();
  }

  /** Fill, and resolve once an entry is ready (rejects when a creation fails meanwhile). */
  prime(): Promise<void> {
    this.fill();
    if (this.ready.length > 0 || this.size <= 0) return Promise.resolve();
    if (this.creating === 0) return Promise.reject(this.lastError ?? new Error('the warm pool cannot make an entry now'));
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /** Close what is ready and stop refilling until the next fill(). */
  async drain(): Promise<void> {
    this.active = false;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    await Promise.all(this.ready.splice(0).map((t) => t.close().catch(() => undefined)));
  }

  /** For good: what is ready is closed, and what is being made is closed when it arrives (or handed to who reserved it). */
  async close(): Promise<void> {
    this.closed = true;
    await this.drain();
    await Promise.all([...this.pending]);
    for (const w of this.waiters.splice(0)) w.reject(new Error('the warm pool is closed'));
  }

  private spawn(): void {
    this.creating++;
    const p: Promise<void> = this.create().then((t) => {
      this.creating--;
      this.backoffMs = 0;
      this.retryAt = 0;
      const taker = this.reserved.shift();
      if (taker) {
        taker(t);
      } else if (this.closed || !this.active || !t.alive) {
        void t.close().catch(() => undefined);
      } else {
        this.ready.push(t);
        t.onDeath(() => {
          const i = this.ready.indexOf(t);
          if (i < 0) return; // taken meanwhile: its taker sees it die
          this.ready.splice(i, 1);
          void t.close().catch(() => undefined);
          if (this.active) this.fill();
        });
        for (const w of this.waiters.splice(0)) w.resolve();
      }
      if (this.active) this.fill();
    }, (e: unknown) => {
      this.creating--;
      this.lastError = e;
      this.backoffMs = Math.min(MAX_BACKOFF_MS, this.backoffMs === 0 ? 1000 : this.backoffMs * 2);
      this.retryAt = Date.now() + this.backoffMs;
      this.reserved.shift()?.(undefined);
      if (this.creating === 0) for (const w of this.waiters.splice(0)) w.reject(e);
      if (this.active) this.fill();
    }).finally(() => { this.pending.delete(p); });
    this.pending.add(p);
  }
}
