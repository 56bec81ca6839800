/**
 * Firebase Cloud Messaging's HTTP v1 API, spoken directly (docs: firebase.google.com/docs/
 * reference/fcm/rest/v1/projects.messages/send): an OAuth2 access token from the app's service
 * account (a JWT signed RS256 with its private key, exchanged at its token URI, RFC 7523), then
 * one POST per message.
 *
 * No firebase-admin: node:crypto signs the JWT, undici (http-client.ts) posts. The SDK brings a
 * large dependency tree (google-auth-library and clients of Firebase services Parley does not
 * use) for two POSTs, wants one initialised "app" object per service account (to be deleted
 * explicitly), and is not meant to be pointed at a local fake server as the tests do.
 */
import crypto from 'node:crypto';
import { signJwt } from './jwt.js';
import { header, parseJson, ProviderHttp, type ProviderAnswer } from './http-client.js';
import { DEFAULT_PROVIDER_TIMEOUT_MS, isPassingStatus, retryResult, type DeliveryResult, type ProviderTimeoutOptions } from './types.js';

/** The fields of a Firebase service-account JSON file the client uses. */
export interface FcmServiceAccount {
  project_id: string;
  client_email: string;
  /** PEM (PKCS#8) RSA key. */
  private_key: string;
  private_key_id?: string;
  /** Where the JWT is exchanged for an access token (and the JWT's `aud`); default Google's. */
  token_uri?: string;
}

/** A v1 message to one device (the fields Parley sends; `android` and `apns` pass through as given). */
export interface FcmMessage {
  /** The device's FCM registration token. */
  token: string;
  /** Shown by the system (absent: a data-only message, handled by the app). */
  notification?: { title?: string; body?: string; image?: string };
  /** FCM takes string values only. */
  data?: Record<string, string>;
  android?: Record<string, unknown>;
  apns?: Record<string, unknown>;
}

export interface FcmClientOptions extends ProviderTimeoutOptions {
  /** FCM's origin (default https://fcm.googleapis.com). */
  baseUrl?: string;
  /**
   * The origins a service account's `token_uri` may name (default Google's,
   * https://oauth2.googleapis.com): the URI comes from an uploaded file, and the client would
   * otherwise POST a signed assertion wherever it points. A send with another is `failed`.
   */
  trustedTokenOrigins?: string[];
  /** Unix ms: the JWT's iat and the tokens' expiry (tests move it). */
  now?: () => number;
}

export const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';
export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';
const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** The assertion's lifetime: Google accepts at most an hour. */
const ASSERTION_SECONDS = 3600;
/** A token is replaced this long before it expires (at most half its life). */
const REFRESH_MARGIN_MS = 5 * 60 * 1000;

interface AccessToken {
  token: string;
  expiresAt: number;
  /** When a send stops using it and exchanges again. */
  refreshAt: number;
}

/** Sends FCM v1 messages for any number of service accounts; one instance per process. */
export class FcmClient {
  private readonly http: ProviderHttp;
  private readonly baseUrl: string;
  private readonly trusted: Set<string>;
  private readonly now: () => number;
  /** Access tokens by service account (cacheKey). */
  private readonly tokens = new Map<string, AccessToken>();
  /** The exchange under way per service account: concurrent sends wait for the same one. */
  private readonly exchanges = new Map<string, Promise<AccessToken | DeliveryResult>>();

  constructor(options: FcmClientOptions = {}) {
    this.http = new ProviderHttp(options.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS);
    this.baseUrl = (options.baseUrl ?? 'https://fcm.googleapis.com').replace(/\/+$/, '');
    this.trusted = new Set(options.trustedTokenOrigins ?? [new URL(GOOGLE_TOKEN_URI).origin]);
    this.now = options.now ?? Date.now;
  }

  /**
   * Sends one message. At most four requests, each within the timeout: a token exchange (none
   * while the account's token is fresh), the send, and after a 401 one new exchange and send.
   */
  async send(account: FcmServiceAccount, message: FcmMessage): Promise<DeliveryResult> {
    const key = cacheKey(account);
    const body = JSON.stringify({ message: v1Message(message) });
    let token = await this.accessToken(account, key);
    if ('outcome' in token) return token;
    let answer = await this.post(account, token.token, body);
    if (!('error' in answer) && answer.status === 401) {
      // Revoked or expired early: one new token (unless a concurrent send already got one) and one more try.
      if (this.tokens.get(key)?.token === token.token) this.tokens.delete(key);
      token = await this.accessToken(account, key);
      if ('outcome' in token) return token;
      answer = await this.post(account, token.token, body);
    }
    if ('error' in answer) return retryResult(null, answer.error);
    return sendResult(answer);
  }

  /** Forgets the tokens and closes the kept-alive connections. */
  close(): void {
    this.tokens.clear();
    this.http.close();
  }

  private post(account: FcmServiceAccount, token: string, body: string) {
    const url = `${this.baseUrl}/v1/projects/${encodeURIComponent(account.project_id)}/messages:send`;
    return this.http.post(url, body, { authorization: `Bearer ${token}`, 'content-type': 'application/json; charset=utf-8' });
  }

  /** The account's access token: the cached one while fresh, else one exchange shared by the sends that need it. */
  private async accessToken(account: FcmServiceAccount, key: string): Promise<AccessToken | DeliveryResult> {
    const cached = this.tokens.get(key);
    if (cached && this.now() < cached.refreshAt) return cached;
    let exchange = this.exchanges.get(key);
    if (!exchange) {
      exchange = this.exchange(account).then((result) => {
        if (!('outcome' in result)) {
          this.forgetExpired();
          this.tokens.set(key, result);
        }
        return result;
      });
      exchange.finally(() => this.exchanges.delete(key)).catch(() => undefined);
      this.exchanges.set(key, exchange);
    }
    return exchange;
  }

  /** One JWT-bearer exchange (RFC 7523) at the account's token URI. */
  private async exchange(account: FcmServiceAccount): Promise<AccessToken | DeliveryResult> {
    const tokenUri = account.token_uri || GOOGLE_TOKEN_URI;
    let origin: string;
    try {
      origin = new URL(tokenUri).origin;
    } catch {
      return { outcome: 'failed', status: null, error: `the service account's token_uri (${tokenUri}) is not a URL` };
    }
    if (!this.trusted.has(origin)) {
      return { outcome: 'failed', status: null, error: `the service account's token_uri (${tokenUri}) is not a trusted token endpoint (${[...this.trusted].join(', ')})` };
    }
    const started = this.now();
    let assertion: string;
    try {
      assertion = signAssertion(account, tokenUri, Math.floor(started / 1000));
    } catch (error) {
      return { outcome: 'failed', status: null, error: `the service account's private_key cannot sign: ${(error as Error).message}` };
    }
    const form = new URLSearchParams({ grant_type: GRANT_TYPE, assertion }).toString();
    const answer = await this.http.post(tokenUri, form, { 'content-type': 'application/x-www-form-urlencoded' });
    if ('error' in answer) return retryResult(null, `token exchange: ${answer.error}`);
    const json = parseJson(answer.body) as { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } | undefined;
    if (answer.status !== 200) {
      const reason = `token exchange answered HTTP ${answer.status}${json?.error ? `: ${String(json.error)}${json.error_description ? ` (${String(json.error_description)})` : ''}` : ''}`;
      return isPassingStatus(answer.status) ? retryResult(answer.status, reason, header(answer.headers, 'retry-after')) : { outcome: 'failed', status: answer.status, error: reason };
    }
    const expiresIn = Number(json?.expires_in);
    if (typeof json?.access_token !== 'string' || !json.access_token || !Number.isFinite(expiresIn) || expiresIn <= 0) {
      return { outcome: 'retry', status: answer.status, error: 'token exchange: the answer holds no access_token and expires_in' };
    }
    const lifetime = expiresIn * 1000;
    return { token: json.access_token, expiresAt: started + lifetime, refreshAt: started + lifetime - Math.min(REFRESH_MARGIN_MS, lifetime / 2) };
  }

  private forgetExpired(): void {
    const now = this.now();
    for (const [key, token] of this.tokens) if (token.expiresAt <= now) this.tokens.delete(key);
  }
}

/** The assertion (RFC 7523): RS256, iss the account, aud the token URI, valid for an hour. */
export function signAssertion(account: FcmServiceAccount, audience: string, iat: number): string {
  const head: Record<string, string> = account.private_key_id ? { typ: 'JWT', kid: account.private_key_id } : { typ: 'JWT' };
  const claims = { iss: account.client_email, scope: FCM_SCOPE, aud: audience, iat, exp: iat + ASSERTION_SECONDS };
  return signJwt('RS256', head, claims, account.private_key);
}

/** One token per account and key: a replaced key (same e-mail, new private_key) gets a token of its own. */
function cacheKey(account: FcmServiceAccount): string {
  const digest = crypto.createHash('sha256').update(account.private_key).digest('base64url');
  return `${account.token_uri || GOOGLE_TOKEN_URI}\u0000${account.client_email}\u0000${account.private_key_id ?? ''}\u0000${digest}`;
}

function v1Message(message: FcmMessage): Record<string, unknown> {
  const out: Record<string, unknown> = { token: message.token };
  if (message.notification) out.notification = message.notification;
  if (message.data) out.data = message.data;
  if (message.android) out.android = message.android;
  if (message.apns) out.apns = message.apns;
  return out;
}

interface GoogleError {
  error?: {
    code?: number;
    message?: string;
    status?: string;
    details?: Array<{ '@type'?: string; errorCode?: string; fieldViolations?: Array<{ field?: string; description?: string }> }>;
  };
}

/** What a send's answer means (firebase.google.com/docs/reference/fcm/rest/v1/ErrorCode). */
function sendResult(answer: ProviderAnswer): DeliveryResult {
  const json = parseJson(answer.body);
  if (answer.status === 200) {
    const name = (json as { name?: unknown } | undefined)?.name;
    return typeof name === 'string' ? { outcome: 'delivered', status: 200, error: null, providerMessageId: name } : { outcome: 'delivered', status: 200, error: null };
  }
  const error = (json as GoogleError | undefined)?.error;
  const details = Array.isArray(error?.details) ? error.details : [];
  const errorCode = details.find((d) => typeof d?.errorCode === 'string')?.errorCode;
  const code = errorCode ?? error?.status ?? `HTTP ${answer.status}`;
  const reason = `FCM answered ${answer.status} ${code}${error?.message ? `: ${error.message}` : ''}`;
  if (answer.status === 404 && errorCode === 'UNREGISTERED') return { outcome: 'invalid-recipient', status: 404, error: reason };
  if (answer.status === 400 && (errorCode === 'INVALID_ARGUMENT' || error?.status === 'INVALID_ARGUMENT') && aboutToken(error?.message, details)) {
    return { outcome: 'invalid-recipient', status: 400, error: reason };
  }
  if (isPassingStatus(answer.status)) return retryResult(answer.status, reason, header(answer.headers, 'retry-after'));
  return { outcome: 'failed', status: answer.status, error: reason };
}

/** Whether an INVALID_ARGUMENT is about the registration token (not another field of the message). */
function aboutToken(message: string | undefined, details: NonNullable<NonNullable<GoogleError['error']>['details']>): boolean {
  const fields = details.flatMap((d) => (Array.isArray(d?.fieldViolations) ? d.fieldViolations : []));
  if (fields.length > 0) return fields.some((violation) => violation?.field === 'message.token');
  return typeof message === 'string' && /registration token/i.test(message);
}
