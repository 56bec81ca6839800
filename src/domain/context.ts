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

/** Who made a request: the API key that authenticated it, the management credential, or a user's auth token. */
export interface Credential {
  /** The key's hash (`management:<key>` for the management credential; the token's hash for an auth token). */
  keyHash: string;
  scope: ApiKeyScope;
  /** The app's own rate limits, read with the key (undefined: the deployment's). */
  limits: RateLimitOverrides | undefined;
  /**
   * What authenticated the request: `authToken` is a user acting for themselves (the authToken
   * header, docs/client-api.md), whose uid is the context's onBehalfOf, limited to the operations
   * of the client access table (http/plugins/client-access.ts). Absent: an API key.
   */
  kind?: 'apiKey' | 'management' | 'authToken';
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
