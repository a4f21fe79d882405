/**
 * Cancellation helpers shared by plugins and adapters. Pure (no I/O): only
 * promises and AbortSignal.
 */

/** Reject when `signal` aborts (with its reason); the underlying work is not cancelled. */
export function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) {
    p.catch(() => undefined); // the abandoned promise may still fail later: not an unhandled rejection
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => { signal.removeEventListener('abort', onAbort); resolve(v); },
      (e) => { signal.removeEventListener('abort', onAbort); reject(e); },
    );
  });
}
