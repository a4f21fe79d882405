/**
 * The embedded mode's job queue: the API process runs its own jobs, so
 * queueing one is waking this process's runner (the job is already in the
 * store, where the runner claims it; a restart finds it there too).
 */
import { Effect } from 'effect';
import type { ServiceUnavailable } from '../../core/errors.js';
import type { JobQueue } from '../../core/jobs.js';

export class LocalJobQueue implements JobQueue {
  constructor(private readonly wake: () => void) {}

  enqueue(_jobId: string): Effect.Effect<void, ServiceUnavailable> {
    return Effect.sync(() => this.wake());
  }
}
