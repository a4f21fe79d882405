/** Injection tokens of the composition root (string identities, never constructor names). */
export const TOKENS = {
  Settings: 'scour/Settings',
  Logger: 'scour/Logger',
  Clock: 'scour/Clock',
  Ids: 'scour/IdGenerator',
  Metrics: 'scour/Metrics',
  RateLimiter: 'scour/RateLimiter',
  AccountStore: 'scour/AccountStore',
  Secrets: 'scour/Secrets',
  SchemaCompiler: 'scour/SchemaCompiler',
  Registry: 'scour/PluginRegistry',
  Stages: 'scour/StageKit',
  HttpApp: 'scour/HttpApp',
  HttpServer: 'scour/HttpServer',
} as const;
