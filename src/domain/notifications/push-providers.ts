import { extended } from '../objects.js';
import crypto from 'node:crypto';
import { badRequest, type ErrorDetails } from '../errors.js';
import { ID_MAX_LENGTH, ID_PATTERN } from '../normalize.js';
import { findUnstorable, jsonNestsDeeperThan, MAX_JSON_DEPTH } from '../text.js';

/**
 * Push providers (docs/notifications.md, "FCM and APNs providers"): what an FCM or APNs provider
 * is, and the checks of its credentials. A provider is usable only if Parley can sign with its
 * key, so a key is loaded with node:crypto when it is given, never first when a push is due.
 */

export const PUSH_PROVIDER_KINDS = ['fcm', 'apns'] as const;
export type PushProviderKind = (typeof PUSH_PROVIDER_KINDS)[number];

/** A provider id, as the client chooses it: alpha-dash like uids, but kept as sent (case included). */
export const PROVIDER_ID_PATTERN = ID_PATTERN;
export const PROVIDER_ID_MAX_LENGTH = ID_MAX_LENGTH;

export const PUSH_PROVIDER_LIMITS = {
  /** Providers of one kind per app. */
  perApp: 25,
  filenameLength: 255,
  /** A service-account JSON as text (Google's are about 2.4 kB). */
  serviceAccountChars: 16 * 1024,
  /** An RSA private key as PEM: 8192 bits at most. */
  rsaPemChars: 8 * 1024,
  /** An RSA key signs FCM's tokens (RS256): at least this many bits. */
  rsaMinBits: 2048,
  /** A .p8 key (an EC P-256 key as PKCS#8 PEM is about 240 characters). */
  p8PemChars: 4 * 1024,
  /** Apple's limit for a bundle id. */
  bundleIdLength: 155,
  fieldLength: 320,
} as const;

/** Whether each kind of FCM message to each platform carries FCM's `notification` key (else data only). */
export interface NotificationInPayload {
  ios: { chat: boolean; call: boolean };
  android: { chat: boolean; call: boolean };
  web: { chat: boolean; call: boolean };
}

export const PAYLOAD_PLATFORMS = ['ios', 'android', 'web'] as const;
export const PAYLOAD_TYPES = ['chat', 'call'] as const;

/** Data-only messages unless the provider says otherwise: the app's own code shows them. */
export const DEFAULT_NOTIFICATION_IN_PAYLOAD: NotificationInPayload = {
  ios: { chat: false, call: false },
  android: { chat: false, call: false },
  web: { chat: false, call: false },
};

/** `given` (a partial object, as the body sends it) over `base`. */
export function mergeNotificationInPayload(
  base: NotificationInPayload,
  given: Partial<Record<(typeof PAYLOAD_PLATFORMS)[number], Partial<Record<(typeof PAYLOAD_TYPES)[number], boolean>>>> | undefined,
): NotificationInPayload {
  const out = structuredClone(base);
  for (const platform of PAYLOAD_PLATFORMS) {
    for (const type of PAYLOAD_TYPES) {
      const value = given?.[platform]?.[type];
      if (typeof value === 'boolean') out[platform][type] = value;
    }
  }
  return out;
}

/**
 * A Firebase service account, as its JSON file has it: the fields FCM's HTTP v1 API needs, and
 * any others the file holds (client_id, token_uri, universe_domain, ...), kept as given.
 */
export interface FcmServiceAccount {
  type: 'service_account';
  project_id: string;
  client_email: string;
  /** PKCS#8 PEM (as node:crypto exports it), whatever PEM form was given. */
  private_key: string;
  private_key_id?: string;
  [field: string]: unknown;
}

/** What the answers show of a service account: never its private key. */
export interface ServiceAccountSummary {
  type: 'service_account';
  project_id: string;
  client_email: string;
  private_key_id?: string;
}

const PROJECT_ID = /^[A-Za-z0-9][A-Za-z0-9:._-]{0,127}$/;
const EMAIL = /^[A-Za-z0-9._%+-]{1,200}@[A-Za-z0-9.-]{1,200}\.[A-Za-z]{2,63}$/;
const PRIVATE_KEY_ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * The service account of an FCM provider, checked: an object (or a string holding its JSON, as
 * a file's content) with `project_id`, `client_email` and `private_key` (a PEM RSA private key
 * node:crypto loads, 2048 bits at least), and `type` "service_account" when it says a type (the
 * vendor's schema names no `type`). The problems are named by field under `field`.
 */
/** `allowHttp`: the deployment lets providers be called over http (PARLEY_WEBHOOK_ALLOW_PRIVATE): a token_uri may be http. */
export function checkServiceAccount(raw: unknown, field = 'serviceAccountCreds', allowHttp = false): { account: FcmServiceAccount } | { problems: ErrorDetails } {
  let value = raw;
  if (typeof value === 'string') {
    if (value.length > PUSH_PROVIDER_LIMITS.serviceAccountChars) return fail(field, `must be at most ${PUSH_PROVIDER_LIMITS.serviceAccountChars} characters`);
    if (jsonNestsDeeperThan(value, MAX_JSON_DEPTH)) return fail(field, `nests deeper than ${MAX_JSON_DEPTH} levels`);
    try {
      value = JSON.parse(value);
    } catch {
      return fail(field, 'must be a service-account JSON object (or its text): this text is not JSON');
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return fail(field, 'must be a service-account JSON object (or its text)');
  // Text PostgreSQL cannot store (NUL, a lone surrogate), which the edge cannot see inside the JSON of a string.
  const unstorable = findUnstorable(value, MAX_JSON_DEPTH, field);
  if (unstorable) return { problems: unstorable };
  const source = value as Record<string, unknown>;
  if (JSON.stringify(source).length > PUSH_PROVIDER_LIMITS.serviceAccountChars) {
    return fail(field, `must be at most ${PUSH_PROVIDER_LIMITS.serviceAccountChars} characters as JSON`);
  }
  const problems: ErrorDetails = {};
  const text = (name: string, pattern: RegExp, what: string, required: boolean): string | undefined => {
    const given = source[name];
    if (given === undefined && !required) return undefined;
    if (typeof given !== 'string' || given.length > PUSH_PROVIDER_LIMITS.fieldLength || !pattern.test(given)) {
      problems[`${field}.${name}`] = given === undefined ? 'is required' : `must be ${what}`;
      return undefined;
    }
    return given;
  };
  if (source.type !== undefined && source.type !== 'service_account') problems[`${field}.type`] = 'must be "service_account" (a Firebase service account’s key file)';
  const projectId = text('project_id', PROJECT_ID, 'a Firebase project id', true);
  const clientEmail = text('client_email', EMAIL, 'the service account’s e-mail address', true);
  const privateKeyId = text('private_key_id', PRIVATE_KEY_ID, 'the key’s id (letters, digits, - and _)', false);
  if (typeof source.token_uri === 'string' ? !isHttpsUrl(source.token_uri, allowHttp) : source.token_uri !== undefined) {
    problems[`${field}.token_uri`] = allowHttp ? 'must be an http or https URL' : 'must be an https URL';
  }
  const key = source.private_key === undefined ? { problem: 'is required' } : rsaPrivateKey(source.private_key);
  if (typeof key !== 'string') problems[`${field}.private_key`] = key.problem;
  if (Object.keys(problems).length > 0 || typeof key !== 'string') return { problems };
  const account: FcmServiceAccount = extended(source, { type: 'service_account' as const, project_id: projectId!, client_email: clientEmail!, private_key: key });
  if (privateKeyId !== undefined) account.private_key_id = privateKeyId;
  return { account };
}

export function summarizeServiceAccount(account: Pick<FcmServiceAccount, 'project_id' | 'client_email' | 'private_key_id'>): ServiceAccountSummary {
  return {
    type: 'service_account',
    project_id: account.project_id,
    client_email: account.client_email,
    ...(account.private_key_id !== undefined ? { private_key_id: account.private_key_id } : {}),
  };
}

/** Apple's ids of a key and of a team: 10 letters and digits (stored upper-cased, as Apple shows them). */
const APPLE_ID = /^[A-Za-z0-9]{10}$/;
/** A reverse-DNS bundle id: two labels at least, of letters, digits and hyphens. */
const BUNDLE_ID = /^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/;

export function appleIdProblem(value: string): string | undefined {
  return APPLE_ID.test(value) ? undefined : 'must be 10 letters and digits (as Apple’s developer account shows it)';
}

export function normalizeAppleId(value: string): string {
  return value.toUpperCase();
}

export function bundleIdProblem(value: string): string | undefined {
  if (value.length > PUSH_PROVIDER_LIMITS.bundleIdLength) return `must be at most ${PUSH_PROVIDER_LIMITS.bundleIdLength} characters`;
  return BUNDLE_ID.test(value) ? undefined : 'must be a reverse-DNS bundle id, e.g. com.example.app';
}

/**
 * A `.p8` key checked: one PEM block `PRIVATE KEY` (PKCS#8) holding an EC P-256 private key
 * that node:crypto loads; answered as node:crypto exports it again (whitespace and line ends
 * made regular), or the problem.
 */
export function p8Key(raw: unknown): string | { problem: string } {
  if (typeof raw !== 'string') return { problem: 'must be the .p8 key file’s text' };
  if (raw.length > PUSH_PROVIDER_LIMITS.p8PemChars) return { problem: `must be at most ${PUSH_PROVIDER_LIMITS.p8PemChars} characters` };
  const pem = pemBlock(raw, ['PRIVATE KEY']);
  const key = pem === undefined ? undefined : loadPrivateKey(pem);
  if (key === undefined) return { problem: 'must be a .p8 key: a PEM "PRIVATE KEY" (PKCS#8) block, whole, as Apple’s key file holds it' };
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    return { problem: 'must be an EC P-256 private key (as Apple issues for APNs)' };
  }
  if (!signsAndVerifies(key)) return { problem: 'does not hold a whole key: a signature it makes does not verify' };
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/** A service account's private key checked: a PEM RSA private key (PKCS#8, or PKCS#1) of 2048 bits at least, exported as PKCS#8. */
function rsaPrivateKey(raw: unknown): string | { problem: string } {
  if (typeof raw !== 'string') return { problem: 'must be the PEM private key of the service account' };
  if (raw.length > PUSH_PROVIDER_LIMITS.rsaPemChars) return { problem: `must be at most ${PUSH_PROVIDER_LIMITS.rsaPemChars} characters` };
  const pem = pemBlock(raw, ['PRIVATE KEY', 'RSA PRIVATE KEY']);
  const key = pem === undefined ? undefined : loadPrivateKey(pem);
  if (key === undefined) return { problem: 'must be a PEM "PRIVATE KEY" block, whole, as the service account’s key file holds it' };
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (key.asymmetricKeyType !== 'rsa' || bits < PUSH_PROVIDER_LIMITS.rsaMinBits) {
    return { problem: `must be an RSA private key of ${PUSH_PROVIDER_LIMITS.rsaMinBits} bits at least` };
  }
  if (!signsAndVerifies(key)) return { problem: 'does not hold a whole key: a signature it makes does not verify' };
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/**
 * The text as exactly one PEM block with one of these labels (surrounding whitespace aside), or
 * undefined. A key pasted with its line ends written as `\n` (as in an environment variable) is
 * read with them restored.
 */
function pemBlock(raw: string, labels: string[]): string | undefined {
  const text = (!raw.includes('\n') && raw.includes('\\n') ? raw.replaceAll('\\n', '\n') : raw).trim();
  const match = /^-----BEGIN ([A-Z ]+)-----\r?\n([A-Za-z0-9+/=\r\n]+)\r?\n-----END ([A-Z ]+)-----$/.exec(text);
  if (!match || match[1] !== match[3] || !labels.includes(match[1]!)) return undefined;
  return text;
}

function loadPrivateKey(pem: string): crypto.KeyObject | undefined {
  try {
    return crypto.createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    return undefined;
  }
}

/** Whether the key signs as a push will (SHA-256: RS256, ES256) and its own public key verifies it: a key altered within its PEM may load, but not sign so. */
function signsAndVerifies(key: crypto.KeyObject): boolean {
  try {
    const data = Buffer.from('parley push provider key check');
    return crypto.verify('sha256', data, crypto.createPublicKey(key), crypto.sign('sha256', data, key));
  } catch {
    return false;
  }
}

function isHttpsUrl(value: string, allowHttp: boolean): boolean {
  if (value.length > PUSH_PROVIDER_LIMITS.fieldLength) return false;
  try {
    const { protocol } = new URL(value);
    return protocol === 'https:' || (allowHttp && protocol === 'http:');
  } catch {
    return false;
  }
}

function fail(field: string, problem: string): { problems: ErrorDetails } {
  return { problems: { [field]: problem } };
}

/** The context a provider's secret is sealed under: bound to its app, kind, provider and field. */
export function secretContext(appId: string, kind: PushProviderKind, providerId: string, field: 'serviceAccount' | 'p8Key'): string {
  return `${appId}:${kind}:${providerId}:${field}`;
}

/**
 * Which of an app's providers of one kind a push uses: the one named (a push token registered
 * with a provider id), else the default; undefined when none fits.
 */
export function providerFor<P extends { providerId: string; isDefault: boolean }>(providers: readonly P[], providerId?: string): P | undefined {
  return providerId === undefined ? providers.find((p) => p.isDefault) : providers.find((p) => p.providerId === providerId);
}

// -- The fields of a provider, checked (the service's; the schema checks types and lengths for the REST path) --

const PROVIDER_ID = new RegExp(PROVIDER_ID_PATTERN);

/** A provider id as given, or ERR_BAD_REQUEST naming providerId. */
export function checkedProviderId(providerId: unknown): string {
  if (typeof providerId !== 'string' || providerId.length > PROVIDER_ID_MAX_LENGTH || !PROVIDER_ID.test(providerId)) {
    throw badRequest({ providerId: `must be 1 to ${PROVIDER_ID_MAX_LENGTH} letters, digits, - and _` });
  }
  return providerId;
}

/** An uploaded file's name, kept to be shown: its problem added to `problems`. */
export function checkFilename(value: unknown, field: string, problems: ErrorDetails): void {
  if (value !== undefined && (typeof value !== 'string' || value.length > PUSH_PROVIDER_LIMITS.filenameLength)) {
    problems[field] = `must be a file name of at most ${PUSH_PROVIDER_LIMITS.filenameLength} characters`;
  }
}

/** The APNs fields a body may give. */
export interface ApnsFieldsInput {
  keyId?: string;
  teamId?: string;
  bundleId?: string;
  p8KeyFilename?: string;
  p8Key?: string;
  includeContentAvailable?: boolean;
  includeMutableContent?: boolean;
  productionMode?: boolean;
}

/** The APNs fields given, checked (their problems added to `problems`): the Apple ids upper-cased, the key as PKCS#8 PEM. */
export function checkApnsFields(input: ApnsFieldsInput, problems: ErrorDetails): { keyId?: string; teamId?: string; p8Key?: string } {
  const out: { keyId?: string; teamId?: string; p8Key?: string } = {};
  for (const field of ['keyId', 'teamId'] as const) {
    const value = input[field];
    if (value === undefined) continue;
    const problem = typeof value === 'string' ? appleIdProblem(value) : 'must be a string';
    if (problem) problems[field] = problem;
    else out[field] = normalizeAppleId(value);
  }
  if (input.bundleId !== undefined) {
    const problem = typeof input.bundleId === 'string' ? bundleIdProblem(input.bundleId) : 'must be a string';
    if (problem) problems.bundleId = problem;
  }
  if (input.p8Key !== undefined) {
    const key = p8Key(input.p8Key);
    if (typeof key === 'string') out.p8Key = key;
    else problems.p8Key = key.problem;
  }
  checkFilename(input.p8KeyFilename, 'p8KeyFilename', problems);
  for (const field of ['includeContentAvailable', 'includeMutableContent', 'productionMode'] as const) {
    if (input[field] !== undefined && typeof input[field] !== 'boolean') problems[field] = 'must be true or false';
  }
  return out;
}

// -- What the delivery engine gets (PushProvidersService.forDelivery): the secrets opened --

/** An FCM provider as the delivery engine needs it: its service account opened. */
export interface FcmDeliveryProvider {
  kind: 'fcm';
  providerId: string;
  isDefault: boolean;
  /** As checked when given: `private_key` as PKCS#8 PEM; token_uri, when given, https. */
  serviceAccount: FcmServiceAccount;
  /** Whether the message carries FCM's `notification` key, per platform and type (else data only). */
  notificationInPayload: NotificationInPayload;
}

/** An APNs provider as the delivery engine needs it: its .p8 key opened. */
export interface ApnsDeliveryProvider {
  kind: 'apns';
  providerId: string;
  isDefault: boolean;
  /** The JWT's `kid` and `iss`; the bundle id is the `apns-topic`. */
  keyId: string;
  teamId: string;
  bundleId: string;
  /** PKCS#8 PEM, EC P-256: signs the ES256 provider token. */
  p8Key: string;
  /** api.push.apple.com when true, api.sandbox.push.apple.com when false. */
  productionMode: boolean;
  includeContentAvailable: boolean;
  includeMutableContent: boolean;
}

export interface PushProvidersForDelivery {
  /** Oldest first, as the lists; at most one of each kind has isDefault. */
  fcm: FcmDeliveryProvider[];
  apns: ApnsDeliveryProvider[];
  /** Providers whose secret does not open (sealed under another deployment key, or altered): left out, and logged. */
  unopened: Array<{ kind: PushProviderKind; providerId: string }>;
}
