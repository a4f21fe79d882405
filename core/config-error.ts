/**
 * Invalid settings: every problem found, listed at once. Thrown at start-up
 * by whatever reads configuration (the env schema, the plans file, a
 * plugin's own settings such as SCOUR_PROXIES); the command line prints it
 * and exits 2. It lives in core so plugins can throw it without importing
 * the composition root.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly code = 'CONFIG_INVALID';
  constructor(readonly issues: readonly string[]) {
    super(`Invalid configuration:\n${issues.map((i) => `  - ${i}`).join('\n')}`);
  }
}
