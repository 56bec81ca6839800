/**
 * A fake APNs on loopback: HTTP/2 over TLS (a self-signed certificate the client is given as its
 * CA), checking the protocol as Apple does: the provider token (an ES256 JWT verified with the
 * key's public half, its kid, iss and iat; older than an hour is ExpiredProviderToken, a new
 * one within 20 minutes of the last is TooManyProviderTokenUpdates), the path, the apns-*
 * headers against the topic and push type, and the payload's form and size.
 */
import crypto from 'node:crypto';
import http2 from 'node:http2';
import { createSelfSignedCertificate, type SelfSignedCertificate } from '../../../src/tls/self-signed.js';
import type { ApnsCredentials } from '../../../src/services/notifications/providers/apns.js';
import { decodeJwt, isObject, json, Script, type FakeBase, type ScriptedAnswer } from './common.js';

export interface ApnsRequest {
  path: string;
  deviceToken: string;
  headers: http2.IncomingHttpHeaders;
  jwt: string;
  body: any;
  /** Which connection (0, 1, ...) carried it. */
  session: number;
}

export interface FakeApns extends FakeBase {
  /** The origin (the client's productionUrl or sandboxUrl). */
  url: string;
  /** The certificate to trust (the client's `ca`). */
  ca: string;
  /** New credentials (an EC P-256 key) for `bundleId`, known to the fake. */
  credentials(bundleId?: string, production?: boolean): ApnsCredentials;
  /** Requests answered 200. */
  delivered: ApnsRequest[];
  /** Every provider token seen on a request, in order, once each. */
  jwts: string[];
  /** HTTP/2 connections opened so far. */
  sessions: number;
  /** Device tokens answered 410 Unregistered. */
  unregistered: Set<string>;
  /** Device tokens of another app: answered 400 DeviceTokenNotForTopic. */
  otherTopic: Set<string>;
  /** Provider tokens issued (iat) before this unix second are answered 403 ExpiredProviderToken (as if Apple's clock said they were old). */
  expireTokensIssuedBefore: number;
  /** After answering the next request, send GOAWAY and close that connection. */
  goawayAfterNext: boolean;
  /** Refuse the next stream unprocessed (RST_STREAM REFUSED_STREAM) and close its connection, as a server going away does. */
  refuseNext: boolean;
  /** Streams refused so. */
  refused: number;
}

interface Key {
  teamId: string;
  publicKey: crypto.KeyObject;
  bundles: Set<string>;
  /** The iat of the newest token seen for the key, and the token. */
  last?: { iat: number; jwt: string };
}

const PUSH_TYPES = new Set(['alert', 'background', 'voip', 'location', 'complication', 'fileprovider', 'mdm', 'liveactivity', 'pushtotalk']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `tls`: the certificate to serve (default a new one). Two fakes a client trusts at once serve
 * one: self-signed certificates of one subject name are told apart by their issuer name only.
 */
export async function startFakeApns(options: { now?: () => number; tls?: SelfSignedCertificate } = {}): Promise<FakeApns> {
  const now = () => Math.floor((options.now ?? Date.now)() / 1000);
  const tls = options.tls ?? createSelfSignedCertificate(['localhost', '127.0.0.1']);
  const keys = new Map<string, Key>();
  const script = new Script();
  const problems: string[] = [];
  let sessionCount = 0;
  const sessionIds = new WeakMap<http2.Http2Session, number>();
  const open = new Set<http2.ServerHttp2Session>();

  const server = http2.createSecureServer({ cert: tls.cert, key: tls.key });
  server.on('session', (session) => {
    sessionIds.set(session, sessionCount++);
    fake.sessions = sessionCount;
    open.add(session);
    session.on('close', () => open.delete(session));
    session.on('error', () => undefined);
  });
  server.on('stream', (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', () => undefined);
    stream.on('end', () => {
      if (fake.hangAll) return;
      if (fake.refuseNext) {
        fake.refuseNext = false;
        fake.refused++;
        stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
        stream.session?.close();
        return;
      }
      const reply = (status: number, reason?: string, extra: Record<string, string> = {}) => {
        const apnsId = typeof headers['apns-id'] === 'string' ? headers['apns-id'] : crypto.randomUUID();
        stream.respond(Object.assign({ ':status': status, 'apns-id': apnsId }, reason ? { 'content-type': 'application/json' } : {}, extra));
        stream.end(reason ? JSON.stringify(status === 410 ? { reason, timestamp: Date.now() } : { reason }) : undefined);
        if (fake.goawayAfterNext) {
          fake.goawayAfterNext = false;
          stream.session?.goaway(http2.constants.NGHTTP2_NO_ERROR);
          stream.session?.close();
        }
      };
      const refuse = (status: number, reason: string, why: string) => {
        problems.push(`${why} (${reason})`);
        reply(status, reason);
      };
      const raw = Buffer.concat(chunks);
      const path = String(headers[':path']);
      if (headers[':method'] !== 'POST') return refuse(405, 'MethodNotAllowed', `method ${headers[':method']}`);
      const deviceToken = /^\/3\/device\/([^/?]+)$/.exec(path)?.[1];
      if (!deviceToken) return refuse(404, 'BadPath', `path ${path}`);
      // -- The provider token --
      const jwt = /^bearer (\S+)$/.exec(String(headers.authorization ?? ''))?.[1];
      if (!jwt) return refuse(403, 'MissingProviderToken', 'no bearer token');
      if (!fake.jwts.includes(jwt)) fake.jwts.push(jwt);
      const decoded = decodeJwt(jwt);
      if (!decoded) return refuse(403, 'InvalidProviderToken', 'not a JWT');
      if (decoded.header.alg !== 'ES256') return refuse(403, 'InvalidProviderToken', `alg ${String(decoded.header.alg)}`);
      const key = keys.get(String(decoded.header.kid));
      if (!key) return refuse(403, 'InvalidProviderToken', `kid ${String(decoded.header.kid)} is no key`);
      if (decoded.claims.iss !== key.teamId) return refuse(403, 'InvalidProviderToken', `iss ${String(decoded.claims.iss)} is not the key's team`);
      if (!crypto.verify('sha256', Buffer.from(decoded.input), { key: key.publicKey, dsaEncoding: 'ieee-p1363' }, decoded.signature)) {
        return refuse(403, 'InvalidProviderToken', 'the signature does not verify');
      }
      const iat = decoded.claims.iat;
      if (!Number.isInteger(iat)) return refuse(403, 'InvalidProviderToken', 'iat is not an integer');
      const at = now();
      if ((iat as number) > at + 60) return refuse(403, 'InvalidProviderToken', 'iat is in the future');
      // Old tokens are the protocol's course (the client is told and makes a new one): not problems.
      if (at - (iat as number) > 3600 || (iat as number) < fake.expireTokensIssuedBefore) return reply(403, 'ExpiredProviderToken');
      if (key.last && key.last.jwt !== jwt) {
        if ((iat as number) < key.last.iat) return refuse(403, 'InvalidProviderToken', 'an older token after a newer one');
        if ((iat as number) - key.last.iat < 20 * 60) return refuse(429, 'TooManyProviderTokenUpdates', 'a new token within 20 minutes of the last');
      }
      key.last = { iat: iat as number, jwt };
      // -- The headers --
      const topic = String(headers['apns-topic'] ?? '');
      const pushType = String(headers['apns-push-type'] ?? '');
      if (!PUSH_TYPES.has(pushType)) return refuse(400, 'InvalidPushType', `apns-push-type ${pushType}`);
      const bundle = pushType === 'voip' ? topic.replace(/\.voip$/, '') : topic;
      if (pushType === 'voip' && !topic.endsWith('.voip')) return refuse(400, 'InvalidPushType', 'a voip push to a topic without .voip');
      if (!key.bundles.has(bundle)) return refuse(400, 'TopicDisallowed', `apns-topic ${topic}`);
      const priority = String(headers['apns-priority'] ?? '10');
      if (!['10', '5', '1'].includes(priority)) return refuse(400, 'BadPriority', `apns-priority ${priority}`);
      if (pushType === 'background' && priority !== '5') return refuse(400, 'BadPriority', 'a background push must have priority 5');
      const expiration = headers['apns-expiration'];
      if (expiration === undefined || !/^\d+$/.test(String(expiration))) return refuse(400, 'BadExpirationDate', `apns-expiration ${String(expiration)}`);
      const collapseId = headers['apns-collapse-id'];
      if (collapseId !== undefined && Buffer.byteLength(String(collapseId)) > 64) return refuse(400, 'BadCollapseId', 'apns-collapse-id over 64 bytes');
      if (headers['apns-id'] !== undefined && !UUID.test(String(headers['apns-id']))) return refuse(400, 'BadMessageId', `apns-id ${String(headers['apns-id'])}`);
      // -- The payload --
      const limit = pushType === 'voip' ? 5120 : 4096;
      if (raw.length > limit) return refuse(413, 'PayloadTooLarge', `${raw.length} bytes`);
      const body = json(raw.toString('utf8'));
      if (!isObject(body) || !isObject(body.aps)) return refuse(400, 'PayloadEmpty', 'the payload has no aps dictionary');
      const aps = body.aps;
      if (pushType === 'background' && (aps['content-available'] !== 1 || aps.alert !== undefined || aps.sound !== undefined || aps.badge !== undefined)) {
        return refuse(400, 'BadPayload', 'a background push must have content-available 1 and no alert, sound or badge');
      }
      if (pushType === 'alert' && aps.alert === undefined && aps.sound === undefined && aps.badge === undefined) return refuse(400, 'BadPayload', 'an alert push shows nothing');
      for (const flag of ['content-available', 'mutable-content'] as const) if (aps[flag] !== undefined && aps[flag] !== 1) return refuse(400, 'BadPayload', `${flag} must be 1`);
      const scripted = script.next();
      if (scripted) {
        if (scripted.hang) return;
        const reason = isObject(scripted.body) && typeof scripted.body.reason === 'string' ? scripted.body.reason : undefined;
        // A token refused is not the key's current one: the next new token is no "update".
        if (scripted.status === 403) key.last = undefined;
        return reply(scripted.status, reason, scripted.headers);
      }
      if (!/^[0-9a-f]{64}$/i.test(deviceToken)) return reply(400, 'BadDeviceToken');
      if (fake.unregistered.has(deviceToken)) return reply(410, 'Unregistered');
      if (fake.otherTopic.has(deviceToken)) return reply(400, 'DeviceTokenNotForTopic');
      fake.delivered.push({ path, deviceToken, headers, jwt, body, session: sessionIds.get(stream.session!) ?? -1 });
      reply(200);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;

  const fake: FakeApns = {
    url: `https://127.0.0.1:${port}`,
    ca: tls.cert,
    problems,
    delivered: [],
    jwts: [],
    sessions: 0,
    unregistered: new Set(),
    otherTopic: new Set(),
    expireTokensIssuedBefore: 0,
    goawayAfterNext: false,
    refuseNext: false,
    refused: 0,
    hangAll: false,
    script: (...answers: ScriptedAnswer[]) => script.push(answers),
    credentials(bundleId = 'chat.parley.test', production = true) {
      const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
      const keyId = crypto.randomBytes(5).toString('hex').toUpperCase();
      const teamId = crypto.randomBytes(5).toString('hex').toUpperCase();
      keys.set(keyId, { teamId, publicKey, bundles: new Set([bundleId]) });
      return { keyId, teamId, bundleId, production, privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
    },
    async close() {
      for (const session of open) session.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return fake;
}
