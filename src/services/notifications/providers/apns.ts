/**
 * Apple Push Notification service, spoken directly (developer.apple.com/documentation/
 * usernotifications/sending-notification-requests-to-apns): HTTP/2 to api.push.apple.com (or
 * the sandbox), token-based authentication (a JWT signed ES256 with the team's .p8 key).
 *
 * node:http2 is the whole client: APNs speaks HTTP/2 only (undici's HTTP/2 is experimental in
 * v6), and an SDK (node-apn, @parse/node-apn) adds nothing but a dependency for one POST.
 * One session per endpoint and provider key stays open between sends (Apple asks providers to
 * keep connections open rather than connect per notification) and is replaced when it goes
 * away (GOAWAY, an error, the server closing it).
 */
import crypto from 'node:crypto';
import http2 from 'node:http2';
import { signJwt } from './jwt.js';
import { DEFAULT_PROVIDER_TIMEOUT_MS, isPassingStatus, MAX_PROVIDER_ANSWER_BYTES, retryResult, type DeliveryResult, type ProviderTimeoutOptions } from './types.js';

/** An APNs provider's credentials (the app's APNs settings). */
export interface ApnsCredentials {
  /** The .p8 key's id (10 characters), the JWT's `kid`. */
  keyId: string;
  teamId: string;
  /** The app's bundle id: the `apns-topic` (with `.voip` for VoIP pushes). */
  bundleId: string;
  /** The .p8 file's content: a PEM PKCS#8 EC P-256 key. */
  privateKey: string;
  /** api.push.apple.com when true, api.sandbox.push.apple.com when false. */
  production: boolean;
}

export type ApnsPushType = 'alert' | 'background' | 'voip';

/** One notification to one device. */
export interface ApnsNotification {
  /** The device token, hex. */
  deviceToken: string;
  pushType: ApnsPushType;
  /** Shown for `alert` (and `voip`, where the app reads it); ignored for `background`. */
  alert?: { title?: string; subtitle?: string; body?: string };
  sound?: string;
  badge?: number;
  /** `content-available: 1`: wakes the app (always set for `background`). */
  contentAvailable?: boolean;
  /** `mutable-content: 1`: a notification service extension may change it. */
  mutableContent?: boolean;
  threadId?: string;
  category?: string;
  /** Keys beside `aps` in the payload (an `aps` key here is ignored). */
  custom?: Record<string, unknown>;
  /** apns-priority; default 10 for alert and voip, 5 for background (Apple refuses 10 there). */
  priority?: 10 | 5 | 1;
  /** apns-expiration, unix seconds (0: deliver now or never); default a day from now, 0 for voip. */
  expiration?: number;
  /** apns-collapse-id, at most 64 bytes. */
  collapseId?: string;
  /** apns-id, a UUID the answer repeats (APNs makes one when absent). */
  apnsId?: string;
}

export interface ApnsClientOptions extends ProviderTimeoutOptions {
  /** The endpoints' origins (default https://api.push.apple.com and https://api.sandbox.push.apple.com). */
  productionUrl?: string;
  sandboxUrl?: string;
  /** Certificates to trust besides Node's (a test's fake server). */
  ca?: string | string[];
  /** Unix ms: the JWT's iat and its reuse (tests move it). */
  now?: () => number;
}

export const APNS_PRODUCTION_URL = 'https://api.push.apple.com';
export const APNS_SANDBOX_URL = 'https://api.sandbox.push.apple.com';
/** A JWT is reused this long: Apple refuses one older than an hour, and new ones more often than every 20 minutes. */
export const APNS_JWT_REUSE_MS = 50 * 60 * 1000;
export const APNS_MAX_PAYLOAD_BYTES = 4096;
export const APNS_MAX_VOIP_PAYLOAD_BYTES = 5120;
const MAX_COLLAPSE_ID_BYTES = 64;
const DEFAULT_EXPIRATION_SECONDS = 24 * 60 * 60;
/** A device token: hex (32 bytes today; Apple says tokens may grow, so up to 200 bytes). */
const DEVICE_TOKEN = /^[0-9a-fA-F]{16,400}$/;

interface Jwt {
  token: string;
  issuedAt: number;
}

/** The answer to one request, or why there was none. */
type Http2Answer = { status: number; headers: http2.IncomingHttpHeaders; body: string } | { error: string; unprocessed?: boolean };

export class ApnsClient {
  private readonly timeoutMs: number;
  private readonly now: () => number;
  private readonly sessions = new Map<string, http2.ClientHttp2Session>();
  private readonly jwts = new Map<string, Jwt>();
  private closed = false;

  constructor(private readonly options: ApnsClientOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS;
    this.now = options.now ?? Date.now;
  }

  /** Sends one notification: one request, and one more with a new JWT if APNs refused the token (403). */
  async send(credentials: ApnsCredentials, notification: ApnsNotification): Promise<DeliveryResult> {
    if (!DEVICE_TOKEN.test(notification.deviceToken)) {
      return { outcome: 'invalid-recipient', status: null, error: 'the device token is not a hex APNs token' };
    }
    const body = JSON.stringify(payload(notification));
    const limit = notification.pushType === 'voip' ? APNS_MAX_VOIP_PAYLOAD_BYTES : APNS_MAX_PAYLOAD_BYTES;
    const size = Buffer.byteLength(body);
    if (size > limit) return { outcome: 'failed', status: null, error: `the payload is ${size} bytes, more than APNs takes (${limit})` };
    if (notification.collapseId !== undefined && Buffer.byteLength(notification.collapseId) > MAX_COLLAPSE_ID_BYTES) {
      return { outcome: 'failed', status: null, error: `apns-collapse-id is longer than ${MAX_COLLAPSE_ID_BYTES} bytes` };
    }
    if (this.closed) return { outcome: 'failed', status: null, error: 'the APNs client is closed' };
    const origin = (credentials.production ? (this.options.productionUrl ?? APNS_PRODUCTION_URL) : (this.options.sandboxUrl ?? APNS_SANDBOX_URL)).replace(/\/+$/, '');
    let jwt = this.jwt(credentials, false);
    if (typeof jwt !== 'string') return jwt;
    let answer = await this.deliver(origin, credentials, notification, body, jwt);
    const reason = 'error' in answer ? undefined : readReason(answer.body);
    if (!('error' in answer) && answer.status === 403 && (reason === 'ExpiredProviderToken' || reason === 'InvalidProviderToken')) {
      jwt = this.jwt(credentials, true, jwt);
      if (typeof jwt !== 'string') return jwt;
      answer = await this.deliver(origin, credentials, notification, body, jwt);
    }
    return result(answer);
  }

  /** Closes every session; a send afterwards is `failed`. */
  close(): void {
    this.closed = true;
    for (const session of this.sessions.values()) session.close();
    this.sessions.clear();
    this.jwts.clear();
  }

  /** The provider's JWT: the one made in the last 50 minutes, or a new one (`renew`: unless `stale` was already replaced). */
  private jwt(credentials: ApnsCredentials, renew: boolean, stale?: string): string | DeliveryResult {
    const key = providerKey(credentials);
    const cached = this.jwts.get(key);
    const now = this.now();
    if (cached && now - cached.issuedAt < APNS_JWT_REUSE_MS && now >= cached.issuedAt && !(renew && cached.token === stale)) return cached.token;
    try {
      const issuedAt = Math.floor(now / 1000);
      const token = signJwt('ES256', { kid: credentials.keyId }, { iss: credentials.teamId, iat: issuedAt }, credentials.privateKey);
      this.jwts.set(key, { token, issuedAt: issuedAt * 1000 });
      return token;
    } catch (error) {
      return { outcome: 'failed', status: null, error: `the .p8 key cannot sign: ${(error as Error).message}` };
    }
  }

  /**
   * One request, and once more on a new session when a kept one turned out to be going away
   * before the request was processed (refused by GOAWAY: HTTP/2 says such a stream may be
   * sent again, RFC 9113 §6.8), which a send can meet between the GOAWAY and its handling.
   */
  private async deliver(origin: string, credentials: ApnsCredentials, notification: ApnsNotification, body: string, jwt: string): Promise<Http2Answer> {
    const kept = this.sessions.has(sessionKey(origin, credentials));
    const answer = await this.request(origin, credentials, notification, body, jwt);
    if (!kept || !('error' in answer) || !answer.unprocessed) return answer;
    this.sessions.get(sessionKey(origin, credentials))?.close();
    this.sessions.delete(sessionKey(origin, credentials));
    return this.request(origin, credentials, notification, body, jwt);
  }

  /** The open session to `origin` for this provider key, or a new one. */
  private session(origin: string, credentials: ApnsCredentials): http2.ClientHttp2Session {
    const key = sessionKey(origin, credentials);
    const open = this.sessions.get(key);
    if (open && !open.closed && !open.destroyed) return open;
    const session = http2.connect(origin, this.options.ca ? { ca: this.options.ca } : {});
    const forget = () => {
      if (this.sessions.get(key) === session) this.sessions.delete(key);
    };
    // A GOAWAY: no new streams on it (those under way finish); the next send connects again.
    session.on('goaway', () => {
      forget();
      session.close();
    });
    session.on('error', forget);
    session.on('close', forget);
    // An open session keeps no process alive; a send under way does (its timer).
    session.unref();
    this.sessions.set(key, session);
    return session;
  }

  private request(origin: string, credentials: ApnsCredentials, notification: ApnsNotification, body: string, jwt: string): Promise<Http2Answer> {
    return new Promise((resolve) => {
      let settled = false;
      let stream: http2.ClientHttp2Stream | undefined;
      const done = (answer: Http2Answer, cancel = false) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (cancel && stream && !stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
        resolve(answer);
      };
      const timer = setTimeout(() => done({ error: `no answer within ${this.timeoutMs} ms` }, true), this.timeoutMs);
      try {
        const session = this.session(origin, credentials);
        stream = session.request(requestHeaders(credentials, notification, jwt, Math.floor(this.now() / 1000)), { endStream: false });
      } catch (error) {
        const code = (error as { code?: string }).code;
        done({ error: describe(error), unprocessed: code === 'ERR_HTTP2_GOAWAY_SESSION' || code === 'ERR_HTTP2_INVALID_SESSION' });
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let status = 0;
      let headers: http2.IncomingHttpHeaders = {};
      stream.on('response', (received) => {
        headers = received;
        status = Number(received[':status']);
      });
      stream.on('data', (chunk: Buffer) => {
        if (size < MAX_PROVIDER_ANSWER_BYTES) chunks.push(chunk.subarray(0, MAX_PROVIDER_ANSWER_BYTES - size));
        size += chunk.length;
      });
      stream.on('end', () => done(status ? { status, headers, body: Buffer.concat(chunks).toString('utf8') } : { error: 'the stream ended without an answer' }));
      const refused = () => !status && stream?.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM;
      stream.on('error', (error) => done({ error: describe(error), unprocessed: refused() }));
      stream.on('close', () =>
        done(status ? { status, headers, body: Buffer.concat(chunks).toString('utf8') } : { error: `the stream closed without an answer (code ${stream?.rstCode ?? '?'})`, unprocessed: refused() }),
      );
      stream.end(body);
    });
  }
}

function sessionKey(origin: string, credentials: ApnsCredentials): string {
  return `${origin}\u0000${providerKey(credentials)}`;
}

/** The provider key a JWT and a session belong to: the team and the key (a key signs for every app of its team). */
function providerKey(credentials: ApnsCredentials): string {
  const digest = crypto.createHash('sha256').update(credentials.privateKey).digest('base64url');
  return `${credentials.teamId}\u0000${credentials.keyId}\u0000${digest}`;
}

function requestHeaders(credentials: ApnsCredentials, n: ApnsNotification, jwt: string, nowSeconds: number): http2.OutgoingHttpHeaders {
  const headers: http2.OutgoingHttpHeaders = {
    ':method': 'POST',
    ':path': `/3/device/${n.deviceToken}`,
    authorization: `bearer ${jwt}`,
    'apns-topic': n.pushType === 'voip' ? `${credentials.bundleId}.voip` : credentials.bundleId,
    'apns-push-type': n.pushType,
    'apns-priority': String(n.priority ?? (n.pushType === 'background' ? 5 : 10)),
    'apns-expiration': String(n.expiration ?? (n.pushType === 'voip' ? 0 : nowSeconds + DEFAULT_EXPIRATION_SECONDS)),
    'content-type': 'application/json',
  };
  if (n.collapseId !== undefined) headers['apns-collapse-id'] = n.collapseId;
  if (n.apnsId !== undefined) headers['apns-id'] = n.apnsId;
  return headers;
}

/** The JSON payload: `aps` and the custom keys beside it. */
export function payload(n: ApnsNotification): Record<string, unknown> {
  const aps: Record<string, unknown> = {};
  if (n.pushType !== 'background') {
    if (n.alert) aps.alert = n.alert;
    if (n.sound !== undefined) aps.sound = n.sound;
    if (n.badge !== undefined) aps.badge = n.badge;
    if (n.threadId !== undefined) aps['thread-id'] = n.threadId;
    if (n.category !== undefined) aps.category = n.category;
    if (n.mutableContent) aps['mutable-content'] = 1;
  }
  if (n.contentAvailable || n.pushType === 'background') aps['content-available'] = 1;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(n.custom ?? {})) if (key !== 'aps' && key !== '__proto__') out[key] = value;
  out.aps = aps;
  return out;
}

function readReason(body: string): string | undefined {
  try {
    const reason = (JSON.parse(body) as { reason?: unknown }).reason;
    return typeof reason === 'string' ? reason : undefined;
  } catch {
    return undefined;
  }
}

/** What an answer means (Apple's "Handling notification responses from APNs"). */
function result(answer: Http2Answer): DeliveryResult {
  if ('error' in answer) return retryResult(null, answer.error);
  const apnsId = answer.headers['apns-id'];
  if (answer.status === 200) {
    return typeof apnsId === 'string' ? { outcome: 'delivered', status: 200, error: null, providerMessageId: apnsId } : { outcome: 'delivered', status: 200, error: null };
  }
  const reason = readReason(answer.body);
  const error = `APNs answered ${answer.status}${reason ? ` ${reason}` : ''}`;
  if (answer.status === 410 && (reason === 'Unregistered' || reason === 'ExpiredToken' || reason === undefined)) return { outcome: 'invalid-recipient', status: 410, error };
  if (answer.status === 400 && (reason === 'BadDeviceToken' || reason === 'DeviceTokenNotForTopic')) return { outcome: 'invalid-recipient', status: 400, error };
  if (isPassingStatus(answer.status)) return retryResult(answer.status, error, answer.headers['retry-after']);
  return { outcome: 'failed', status: answer.status, error };
}

function describe(error: unknown): string {
  const { code, message } = error as Error & { code?: string };
  return code ? `${code}: ${message}` : message;
}
