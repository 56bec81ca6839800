/** The subset of a pino logger that the layers below HTTP use. */
export interface Logger {
  debug(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

import type { RateLimitOverrides } from './rate-limits.js';

export type ApiKeyScope = 'fullAccess' | 'authOnly';

/** Who made a request: the API key that authenticated it. */
export interface Credential {
  keyHash: string;
  scope: ApiKeyScope;
  /** The app's own rate limits, read with the key (undefined: the deployment's). */
  limits: RateLimitOverrides | undefined;
}

/**
 * Passed first to every service call. Services never see the HTTP request; this is all
 * they know about who is asking.
 */
export interface RequestContext {
  appId: string;
  requestId: string;
  log: Logger;
  credential?: Credential;
  /** The uid named by the `onBehalfOf` header, normalised; not yet checked to exist. */
  onBehalfOf?: string;
}

export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger;
  },
};
