/** The OpenAI-compatible chat client now lives in the SDK (research and extract_json share it): plugins/sdk/chat-client.ts. */
export * from '../sdk/chat-client.js';
