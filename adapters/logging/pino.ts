/**
 * The Logger port on pino: structured JSON lines. API keys never reach a
 * log: authorization headers, keys and tokens are redacted wherever they
 * appear in a logged object, and request bodies are not logged.
 */
import { pino, type Logger as Pino } from 'pino';
import type { Logger } from '../../core/ports.js';

export const REDACT_PATHS = [
  'authorization', 'headers.authorization', 'req.headers.authorization', '*.authorization',
  'api_key', '*.api_key', 'apiKey', '*.apiKey', 'token', '*.token', 'secret', '*.secret', 'admin_token', '*.admin_token',
];

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const options = { level, base: { service: 'scour' }, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  const p: Pino = destination ? pino(options, destination as never) : pino(options);
  return p as unknown as Logger;
}
