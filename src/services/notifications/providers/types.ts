/**
 * What the delivery clients of the notification providers (FCM, APNs, SendGrid, Twilio, custom
 * webhooks) have in common: one result type and the timeout option.
 *
 * A client never throws for what a provider answers, nor for a provider that does not answer
 * (a timeout, a refused connection, a TLS error): each is a DeliveryResult. It throws only for a
 * programming error (an argument its types already forbid).
 */

/**
 * What one send came to:
 * - `delivered`: the provider accepted it (`providerMessageId` names it where the provider says).
 * - `invalid-recipient`: the device token, phone number or address will never take a delivery
 *   (unregistered, malformed, for another app): the caller forgets it.
 * - `retry`: a passing failure (rate limited, the provider's 5xx, no answer in time, a broken
 *   connection); `retryAfterMs` when the provider said how long to wait (Retry-After).
 * - `failed`: this will not succeed as it is (credentials refused, a payload the provider
 *   refuses, a configuration error): retrying the same send would fail the same way.
 */
export type DeliveryOutcome = 'delivered' | 'invalid-recipient' | 'retry' | 'failed';

export interface DeliveryResult {
  outcome: DeliveryOutcome;
  /** The provider's HTTP status (of the last request made), or null when none was had. */
  status: number | null;
  /** Why it was not delivered (the provider's own error code and message where it gave them); null when delivered. */
  error: string | null;
  /** How long the provider asked to wait before the next try (Retry-After), on `retry`. */
  retryAfterMs?: number;
  /** The provider's id of the accepted message: FCM's message name, the apns-id, SendGrid's X-Message-Id, Twilio's sid. */
  providerMessageId?: string;
}

/** The option every client takes. */
export interface ProviderTimeoutOptions {
  /**
   * The most one HTTP request to the provider may take, from asking for a connection to the end
   * of the answer (default DEFAULT_PROVIDER_TIMEOUT_MS). A send makes one request, or a few where
   * the client says (FCM: a token exchange and one retry after a 401).
   */
  timeoutMs?: number;
}

export const DEFAULT_PROVIDER_TIMEOUT_MS = 10_000;

/** The most of a provider's answer read: error bodies are small; the rest is not kept. */
export const MAX_PROVIDER_ANSWER_BYTES = 64 * 1024;

/** The longest Retry-After honoured (a day): a larger one is taken as a day. */
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * A Retry-After header's wait in ms (RFC 9110 §10.2.3: seconds, or an HTTP date), or undefined
 * when absent or not understood.
 */
export function retryAfterMs(value: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  // An HTTP date starts with the day's name in all three of its forms (IMF-fixdate, RFC 850, asctime).
  const at = /^[A-Za-z]{3}/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

/** Whether an HTTP status is a passing failure: 429 (rate limited) or a 5xx (the provider's own trouble). */
export function isPassingStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status < 600);
}

/** A `retry` result for a status, with the wait its Retry-After asked for. */
export function retryResult(status: number | null, error: string, retryAfter?: string | string[]): DeliveryResult {
  const wait = retryAfterMs(retryAfter);
  return wait === undefined ? { outcome: 'retry', status, error } : { outcome: 'retry', status, error, retryAfterMs: wait };
}
