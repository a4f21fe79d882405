/**
 * The `webhook` part of an asynchronous job's status (bulk scrape, crawl,
 * research): each delivery of the job's signed webhook and its attempts.
 */
import { StrictObject, Type } from './index.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const DeliveryAttemptView = StrictObject({
  attempt: Type.Integer(),
  ok: Type.Boolean(),
  status_code: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  attempted_at: Type.String(),
  next_attempt_at: Nullable(Type.String()),
});

export const DeliveryView = StrictObject({
  delivery_id: Type.String(),
  event: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('sending'), Type.Literal('delivered'), Type.Literal('failed')]),
  attempts: Type.Integer(),
  next_attempt_at: Nullable(Type.String()),
  history: Type.Array(DeliveryAttemptView),
});

export const WebhookView = StrictObject({ deliveries: Type.Array(DeliveryView) });
