/**
 * Group commit per account. Every reserve (and every settle) of one account
 * updates that account's row, and each holds the row lock until its commit
 * is on disk, so one account's requests are serialised at one commit each.
 * A KeyedBatcher keeps at most one statement in flight per key (account):
 * a call for an idle key is sent on the next microtask (so calls made in
 * the same tick go together), and calls arriving while one is in flight
 * wait and are sent together, as one statement, when it returns. Under no
 * load a call is sent alone at once; under load the batch grows with the
 * queue, and the commits per account fall with it.
 *
 * Each caller gets its own result (the statement returns one row per item,
 * in order); a failure of the statement fails every caller of that batch,
 * as it would have failed each of their statements.
 */

interface Waiter<I, R> {
  readonly item: I;
  readonly resolve: (r: R) => void;
  readonly reject: (e: unknown) => void;
}

interface Lane<I, R> {
  queue: Waiter<I, R>[];
  busy: boolean;
}

export class KeyedBatcher<I, R> {
  private readonly lanes = new Map<string, Lane<I, R>>();
  /** Statements sent and items carried (for tests and the bench). */
  statements = 0;
  items = 0;

  constructor(
    /** One statement for `items`, all of key `key`; resolves with one result per item, in order. */
    private readonly flush: (key: string, items: readonly I[]) => Promise<readonly R[]>,
    /** At most this many items per statement; the rest go in the next one. */
    private readonly max = 256,
  ) {}

  submit(key: string, item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      let lane = this.lanes.get(key);
      if (lane === undefined) {
        lane = { queue: [], busy: false };
        this.lanes.set(key, lane);
      }
      lane.queue.push({ item, resolve, reject });
      if (!lane.busy) {
        lane.busy = true;
        const l = lane;
        queueMicrotask(() => this.send(key, l));
      }
    });
  }

  private send(key: string, lane: Lane<I, R>): void {
    if (lane.queue.length === 0) {
      lane.busy = false;
      this.lanes.delete(key);
      return;
    }
    const batch = lane.queue.length <= this.max ? lane.queue : lane.queue.slice(0, this.max);
    lane.queue = lane.queue.length <= this.max ? [] : lane.queue.slice(this.max);
    this.statements++;
    this.items += batch.length;
    let sent: Promise<readonly R[]>;
    try {
      sent = this.flush(key, batch.map((w) => w.item));
    } catch (e) {
      sent = Promise.reject(e);
    }
    sent.then(
      (results) => {
        for (let i = 0; i < batch.length; i++) {
          if (i >= results.length) batch[i]!.reject(new Error(`batch statement returned ${results.length} results for ${batch.length} items`));
          else batch[i]!.resolve(results[i] as R);
        }
      },
      (e: unknown) => {
        for (const w of batch) w.reject(e);
      },
    ).finally(() => this.send(key, lane));
  }
}
