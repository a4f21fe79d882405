/**
 * When a rendered page is ready to be read, without a request's wait_for:
 * the page's requests are counted from before the navigation (every frame's,
 * as Playwright reports them), and after DOM ready the page is taken as soon
 * as no request has been in flight for a short quiet period, or at a cap
 * whichever comes first. No fixed sleep: a page whose subresources are done
 * at DOM ready is read one quiet period after it.
 */

/** What the tracker listens to (a Playwright Page has these). */
export interface RequestEvents {
  on(event: 'request' | 'requestfinished' | 'requestfailed', listener: (request: unknown) => void): unknown;
  off(event: 'request' | 'requestfinished' | 'requestfailed', listener: (request: unknown) => void): unknown;
}

export class NetworkTracker {
  private readonly inFlight = new Set<unknown>();
  private started = 0;
  private changed: (() => void) | undefined;
  private readonly onRequest = (r: unknown) => {
    this.inFlight.add(r);
    this.started++;
    this.changed?.();
  };
  private readonly onDone = (r: unknown) => {
    if (this.inFlight.delete(r)) this.changed?.();
  };

  constructor(private readonly page: RequestEvents) {
    page.on('request', this.onRequest);
    page.on('requestfinished', this.onDone);
    page.on('requestfailed', this.onDone);
  }

  /** Requests started since the tracker was made. */
  get requests(): number { return this.started; }

  /**
   * Resolves once no request has been in flight for `quietMs`, or after
   * `maxMs` in any case (never, for Infinity); rejects with the signal's
   * reason when it aborts.
   */
  quiet(quietMs: number, maxMs: number, signal: AbortSignal): Promise<'quiet' | 'cap'> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      let quietTimer: NodeJS.Timeout | undefined;
      const finish = (how: 'quiet' | 'cap' | 'aborted') => {
        clearTimeout(quietTimer);
        clearTimeout(capTimer);
        signal.removeEventListener('abort', onAbort);
        this.changed = undefined;
        if (how === 'aborted') reject(signal.reason);
        else resolve(how);
      };
      const onAbort = () => finish('aborted');
      // No cap (Infinity): only the signal ends a page that never goes quiet.
      const capTimer = Number.isFinite(maxMs) ? setTimeout(() => finish('cap'), Math.max(0, maxMs)) : undefined;
      const arm = () => {
        clearTimeout(quietTimer);
        quietTimer = this.inFlight.size === 0 ? setTimeout(() => finish('quiet'), quietMs) : undefined;
      };
      this.changed = arm;
      signal.addEventListener('abort', onAbort, { once: true });
      arm();
    });
  }

  dispose(): void {
    this.changed = undefined;
    this.page.off('request', this.onRequest);
    this.page.off('requestfinished', this.onDone);
    this.page.off('requestfailed', this.onDone);
    this.inFlight.clear();
  }
}
