/**
 * A fake Google OAuth2 token endpoint and FCM HTTP v1 API on loopback, checking the protocol:
 * the token endpoint verifies the JWT-bearer assertion (RS256 signature by the service account's
 * public key, its claims, the grant type) and issues tokens that expire; the send endpoint takes
 * only a bearer it issued, for the path's project, and a v1 body.
 */
import crypto from 'node:crypto';
import type http from 'node:http';
import type { FcmServiceAccount } from '../../../src/services/notifications/providers/fcm.js';
import { answer, decodeJwt, isObject, json, listen, readBody, Script, type FakeBase, type ScriptedAnswer } from './common.js';

export const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';
const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Clock skew Google tolerates on iat. */
const SKEW_SECONDS = 60;

export interface FcmExchange {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
  issued: string;
}

export interface FcmSend {
  projectId: string;
  bearer: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export interface FakeFcm extends FakeBase {
  /** FCM's base URL (the client's `baseUrl`). */
  baseUrl: string;
  /** The token endpoint: service accounts' `token_uri`. */
  tokenUri: string;
  origin: string;
  /** A new service account of `projectId` (an RSA key pair), known to the token endpoint. */
  serviceAccount(projectId?: string): FcmServiceAccount;
  /** Exchanges answered with a token. */
  exchanges: FcmExchange[];
  /** Sends answered 200 (or scripted). */
  sends: FcmSend[];
  /** Every well-formed send, whatever it was answered (or left unanswered), in arrival order. */
  requests: FcmSend[];
  /** Registration tokens answered 404 UNREGISTERED. */
  unregistered: Set<string>;
  /** Answers the next token exchanges take (after the assertion was checked). */
  scriptExchange(...answers: ScriptedAnswer[]): void;
  /** Every issued access token stops working (answered 401). */
  revokeAll(): void;
  /** Exchanges are left unanswered. */
  hangExchanges: boolean;
}

interface Account {
  projectId: string;
  keyId: string;
  publicKey: crypto.KeyObject;
}

export async function startFakeFcm(options: { now?: () => number; tokenLifetimeSeconds?: number } = {}): Promise<FakeFcm> {
  const now = () => Math.floor((options.now ?? Date.now)() / 1000);
  const accounts = new Map<string, Account>();
  const issued = new Map<string, { email: string; expiresAt: number }>();
  const sendScript = new Script();
  const exchangeScript = new Script();
  const problems: string[] = [];
  /** Tokens revokeAll() ended: a 401 for them is the protocol's course, not a client's mistake. */
  const revoked = new Set<string>();

  const refuseExchange = (res: http.ServerResponse, why: string) => {
    problems.push(`token endpoint: ${why}`);
    answer(res, 400, { error: 'invalid_grant', error_description: why });
  };
  const unauthenticated = (res: http.ServerResponse, why: string, noted = true) => {
    if (noted) problems.push(`send: ${why}`);
    answer(res, 401, { error: { code: 401, message: `Request had invalid authentication credentials. ${why}`, status: 'UNAUTHENTICATED' } });
  };
  const invalidArgument = (res: http.ServerResponse, why: string, field?: string) => {
    if (!field) problems.push(`send: ${why}`);
    const details = field ? [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field, description: why }] }] : [];
    answer(res, 400, {
      error: { code: 400, message: why, status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'INVALID_ARGUMENT' }, ...details] },
    });
  };

  async function token(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const raw = await readBody(req);
    if (fake.hangExchanges) return;
    if (req.method !== 'POST') return refuseExchange(res, `method ${req.method}`);
    if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) return refuseExchange(res, `content-type ${req.headers['content-type']}`);
    const form = new URLSearchParams(raw);
    if (form.get('grant_type') !== GRANT_TYPE) return refuseExchange(res, `grant_type ${form.get('grant_type')}`);
    const jwt = decodeJwt(form.get('assertion') ?? '');
    if (!jwt) return refuseExchange(res, 'the assertion is not a JWT');
    const { header, claims } = jwt;
    if (header.alg !== 'RS256') return refuseExchange(res, `alg ${String(header.alg)}`);
    if (header.typ !== undefined && header.typ !== 'JWT') return refuseExchange(res, `typ ${String(header.typ)}`);
    const account = accounts.get(String(claims.iss));
    if (!account) return refuseExchange(res, `iss ${String(claims.iss)} is no service account`);
    if (header.kid !== account.keyId) return refuseExchange(res, `kid ${String(header.kid)} is not the account's key`);
    if (!crypto.verify('sha256', Buffer.from(jwt.input), account.publicKey, jwt.signature)) return refuseExchange(res, 'the signature does not verify');
    if (typeof claims.scope !== 'string' || !claims.scope.split(' ').includes(FCM_SCOPE)) return refuseExchange(res, `scope ${String(claims.scope)}`);
    if (claims.aud !== fake.tokenUri) return refuseExchange(res, `aud ${String(claims.aud)} is not ${fake.tokenUri}`);
    const { iat, exp } = claims;
    if (!Number.isInteger(iat) || !Number.isInteger(exp)) return refuseExchange(res, 'iat and exp must be integers');
    const at = now();
    if ((iat as number) > at + SKEW_SECONDS) return refuseExchange(res, 'iat is in the future');
    if ((exp as number) <= at) return refuseExchange(res, 'the assertion has expired');
    if ((exp as number) <= (iat as number) || (exp as number) - (iat as number) > 3600) return refuseExchange(res, 'exp must be within an hour of iat');
    const scripted = exchangeScript.next();
    if (scripted) return scripted.hang ? undefined : answer(res, scripted.status, scripted.body, scripted.headers);
    const lifetime = options.tokenLifetimeSeconds ?? 3599;
    const accessToken = `ya29.fake-${crypto.randomBytes(12).toString('base64url')}`;
    issued.set(accessToken, { email: String(claims.iss), expiresAt: at + lifetime });
    fake.exchanges.push({ header, claims, issued: accessToken });
    answer(res, 200, { access_token: accessToken, expires_in: lifetime, token_type: 'Bearer' });
  }

  async function send(req: http.IncomingMessage, res: http.ServerResponse, projectId: string): Promise<void> {
    const raw = await readBody(req);
    if (fake.hangAll) return;
    if (req.method !== 'POST') return invalidArgument(res, `method ${req.method}`);
    const bearer = /^Bearer (\S+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    if (!bearer) return unauthenticated(res, 'no bearer token');
    const grant = issued.get(bearer);
    // An expired or revoked token is the protocol's normal course: not a problem of the client's.
    if (!grant) return unauthenticated(res, 'the token was not issued or was revoked', revoked.has(bearer) === false);
    if (grant.expiresAt <= now()) return unauthenticated(res, 'the token has expired', false);
    if (accounts.get(grant.email)?.projectId !== projectId) {
      problems.push(`send: the token's account is not of project ${projectId}`);
      return answer(res, 403, {
        error: { code: 403, message: 'SenderId mismatch', status: 'PERMISSION_DENIED', details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'SENDER_ID_MISMATCH' }] },
      });
    }
    if (!String(req.headers['content-type']).startsWith('application/json')) return invalidArgument(res, `content-type ${req.headers['content-type']}`);
    const body = json(raw);
    const problem = messageProblem(body);
    if (problem) return invalidArgument(res, problem);
    const message = (body as { message: Record<string, unknown> }).message;
    fake.requests.push({ projectId, bearer, headers: req.headers, body });
    const scripted = sendScript.next();
    if (scripted) {
      if (scripted.hang) return;
      return answer(res, scripted.status, scripted.body, scripted.headers);
    }
    const deviceToken = message.token as string;
    if (!/^[A-Za-z0-9_:-]{20,}$/.test(deviceToken)) return invalidArgument(res, 'The registration token is not a valid FCM registration token', 'message.token');
    if (fake.unregistered.has(deviceToken)) {
      return answer(res, 404, {
        error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND', details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'UNREGISTERED' }] },
      });
    }
    fake.sends.push({ projectId, bearer, headers: req.headers, body });
    answer(res, 200, { name: `projects/${projectId}/messages/0:${crypto.randomBytes(8).toString('hex')}` });
  }

  const server = await listen(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/token') return token(req, res);
    const project = /^\/v1\/projects\/([^/]+)\/messages:send$/.exec(path)?.[1];
    if (project) return send(req, res, decodeURIComponent(project));
    problems.push(`no such path ${path}`);
    answer(res, 404, { error: { code: 404, message: 'Not Found', status: 'NOT_FOUND' } });
  }, problems);

  const fake: FakeFcm = {
    baseUrl: server.origin,
    tokenUri: `${server.origin}/token`,
    origin: server.origin,
    problems,
    exchanges: [],
    sends: [],
    requests: [],
    unregistered: new Set(),
    hangAll: false,
    hangExchanges: false,
    script: (...answers) => sendScript.push(answers),
    scriptExchange: (...answers) => exchangeScript.push(answers),
    revokeAll() {
      for (const token of issued.keys()) revoked.add(token);
      issued.clear();
    },
    serviceAccount(projectId = 'parley-test') {
      const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
      const email = `parley-${crypto.randomBytes(4).toString('hex')}@${projectId}.iam.gserviceaccount.com`;
      const keyId = crypto.randomBytes(20).toString('hex');
      accounts.set(email, { projectId, keyId, publicKey });
      return {
        project_id: projectId,
        client_email: email,
        private_key_id: keyId,
        private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
        token_uri: fake.tokenUri,
      };
    },
    close: () => server.close(),
  };
  return fake;
}

const MESSAGE_KEYS = new Set(['token', 'notification', 'data', 'android', 'apns', 'webpush', 'fcm_options', 'name']);

/** Why a send's body is not a v1 `{ message }` to one token, or undefined. */
function messageProblem(body: unknown): string | undefined {
  if (!isObject(body)) return 'the body is not a JSON object';
  const extra = Object.keys(body).filter((key) => key !== 'message' && key !== 'validate_only');
  if (extra.length > 0) return `Invalid JSON payload received. Unknown name "${extra[0]}"`;
  const message = body.message;
  if (!isObject(message)) return 'message is required';
  const unknown = Object.keys(message).find((key) => !MESSAGE_KEYS.has(key));
  if (unknown) return `Invalid JSON payload received. Unknown name "${unknown}" at 'message'`;
  if (typeof message.token !== 'string' || message.token === '') return 'message.token is required (one target)';
  if (message.notification !== undefined) {
    if (!isObject(message.notification)) return 'message.notification must be an object';
    for (const [key, value] of Object.entries(message.notification)) {
      if (!['title', 'body', 'image'].includes(key)) return `Unknown name "${key}" at 'message.notification'`;
      if (typeof value !== 'string') return `message.notification.${key} must be a string`;
    }
  }
  if (message.data !== undefined) {
    if (!isObject(message.data)) return 'message.data must be an object';
    for (const [key, value] of Object.entries(message.data)) if (typeof value !== 'string') return `message.data.${key} must be a string`;
  }
  for (const key of ['android', 'apns'] as const) if (message[key] !== undefined && !isObject(message[key])) return `message.${key} must be an object`;
  return undefined;
}
