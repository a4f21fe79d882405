/**
 * Where a render's time goes, phase by phase, measured by the browser fetcher
 * itself and handed to an optional hook (benchmarks, metrics). Phases follow
 * one another; each phase's figure is the wall time from the end of the
 * previous one, so the phases of one render add up to its total.
 */

export const RENDER_PHASES = [
  /** Waiting for a page slot (the pool bound). */
  'queue',
  /** Starting (or binding) the render's own egress proxy. */
  'proxy',
  /** A fresh browser context and page: taken from the warm pool, or created (and the browser launched, on the first render). */
  'context',
  /** Per-request set-up on the page: viewport, headers, cookies, routes, listeners. */
  'setup',
  /** Navigation up to DOM ready (DOMContentLoaded): the request through the egress proxy, the answer, parsing, blocking scripts. */
  'navigate',
  /** After DOM ready, waiting for the load event (the old rule; 0 when not waited for). */
  'load',
  /** Waiting for what the request asked: wait_for, wait_time, or the network to go quiet. */
  'settle',
  /** Reading the rendered DOM and the response headers. */
  'content',
  /** Taking and checking the screenshot. */
  'screenshot',
  /** Closing the page, its context and its proxy (after the answer when the fetcher closes in the background). */
  'close',
] as const;

export type RenderPhase = typeof RENDER_PHASES[number];

export interface RenderTiming {
  readonly url: string;
  /** 'ok', or the failure's code (TARGET_TIMEOUT, ...), or 'aborted'. */
  readonly outcome: string;
  /** Milliseconds spent in each phase (0 for a phase that did not run). */
  readonly phases: Readonly<Record<RenderPhase, number>>;
  /** From fetch() to its answer (result or error). */
  readonly answerMs: number;
  /** From fetch() to the page, context and proxy being released. */
  readonly totalMs: number;
  /** The context came ready from the warm pool. */
  readonly warm: boolean;
  /** Requests the page made (the main document included), and how many of them were blocked. */
  readonly requests: number;
  readonly blocked: number;
}

/**
 * Accumulates wall time per phase: enter(p) charges the time since the
 * previous enter() to the phase being left, so a render that fails midway
 * charges its last stretch to the phase it failed in.
 */
export class PhaseClock {
  readonly started = performance.now();
  private last = this.started;
  private current: RenderPhase = 'queue';
  readonly phases: Record<RenderPhase, number> = Object.fromEntries(RENDER_PHASES.map((p) => [p, 0])) as Record<RenderPhase, number>;

  enter(phase: RenderPhase): void {
    const now = performance.now();
    this.phases[this.current] += now - this.last;
    this.last = now;
    this.current = phase;
  }

  /** Milliseconds since the clock started. */
  elapsed(): number {
    return performance.now() - this.started;
  }
}
