/** Webhooks' I/O side in one import: signing and verifying, and one signed delivery attempt. The rules are core/webhooks.ts. */
export { DEFAULT_SIGNATURE_TOLERANCE_SECONDS, newWebhookSecret, signPayload, verifySignature } from './sign.js';
export { DEFAULT_WEBHOOK_MAX_RESPONSE_BYTES, DEFAULT_WEBHOOK_TIMEOUT_MS, deliverWebhook, newDeliveryId } from './deliver.js';
export type { DeliverWebhookOptions, DeliveryAttempt } from './deliver.js';
