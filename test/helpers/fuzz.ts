/**
 * The seeded fuzz of every operation, across two apps (the test test/api/bad-input-fuzz.test.ts
 * runs a short seed; `npm run fuzz` a long one). Each app holds a tenant of every kind of entity
 * (tenant-data.ts), its texts carrying the app's marker. Request `i` of a seed is made from the
 * seed and `i` alone: an operation of the OpenAPI document in turn, called with one app's key
 * (sometimes its authOnly key, none, or a wrong one), naming that app's entities, the other
 * app's, or junk, with a body from the operation's schema that is then made hostile (fuzz-input.ts)
 * and, for some, hostile headers. Every answer is checked (isolation-checks.ts): below 500, errors
 * in the vendor's shape, and nothing of the other app's (its marker, keys, tokens, message ids).
 */
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { hostOf, TEST_DOMAIN, TEST_REGION, type TestApp } from './app.js';
import { HOLE, junkValue, NASTY_TEXT, PATH_JUNK, QUERY_JUNK, rawBody, requestRng, type Rng } from './fuzz-input.js';
import { commonFailures } from './isolation-checks.js';
import { BODY_RULES, kindValues, listOperations, PATH_RULES, QUERY_RULES, type Kind, type Operation } from './route-matrix.js';
import { newMarker, seedTenant, sharedIds, type Tenant } from './tenant-data.js';

/** One app of the fuzz: its tenants (a new one every `reseedEvery` requests) and what must never leave it. */
export interface FuzzApp {
  app: CreatedApp;
  marker: string;
  tenants: Tenant[];
  /** The tenants' secrets and message ids, and every key and token made for this app during the run. */
  view: Tenant;
}

export interface FuzzRequest {
  index: number;
  operationId: string;
  /** Whose key the request carries: its answer must hold nothing of the other's. */
  actor: 'A' | 'B' | 'nobody';
  /** The kinds of hostility in it, for the summary. */
  families: string[];
  inject: InjectOptions & { url: string; headers: Record<string, string | string[]> };
}

export interface FuzzFailure {
  /**
   * 'counts': a list's total other than its items. Not a failure of the fuzz: under its
   * concurrent writes a page and its total (read by separate statements) may see different
   * moments; counted and shown, as the isolation test (no concurrent writes) fails on it.
   */
  kind: '5xx' | 'cross-app' | 'shape' | 'counts';
  message: string;
  replay: string;
}

export interface FuzzSummary {
  seed: number;
  requests: number;
  statuses: Record<string, number>;
  fivexx: number;
  crossApp: number;
  shape: number;
  counts: number;
  errorCodes: Record<string, number>;
  families: Record<string, number>;
  operations: Record<string, number>;
  failures: FuzzFailure[];
  durationMs: number;
}

export interface FuzzOptions {
  seed: number;
  requests: number;
  /** Index of the first request (to make a failing one again). */
  from?: number;
  concurrency?: number;
  /** New tenants in both apps every this many requests (the fuzz deletes what it names). */
  reseedEvery?: number;
  onProgress?: (done: number, summary: FuzzSummary) => void;
  /** Failures kept with their replay; all are counted. */
  keepFailures?: number;
}

export interface Fuzz {
  t: TestApp;
  a: FuzzApp;
  b: FuzzApp;
  operations: Operation[];
}

/** Seeds both apps and reads the operations. Message ids start far from small numbers (see the isolation test). */
export async function setupFuzz(t: TestApp): Promise<Fuzz> {
  await sql`select setval(pg_get_serial_sequence('messages', 'id'), 5000000)`.execute(t.database.db);
  const fuzzApp = async (app: CreatedApp): Promise<FuzzApp> => {
    const marker = newMarker();
    const tenant = await seedTenant(t, app, sharedIds(), marker);
    return { app, marker, tenants: [tenant], view: { ...tenant, secrets: [...tenant.secrets], messages: [...tenant.messages] } };
  };
  const a = await fuzzApp(t.appA);
  const b = await fuzzApp(t.appB);
  const { operations, problems } = await listOperations(t);
  if (problems.length > 0) throw new Error(`operations: ${problems.join('; ')}`);
  return { t, a, b, operations };
}

/** Adds a new tenant to an app; a seeding the fuzz's own changes refuse (a quota reached) is skipped. */
async function reseed(t: TestApp, fuzzApp: FuzzApp): Promise<void> {
  try {
    const tenant = await seedTenant(t, fuzzApp.app, sharedIds(), fuzzApp.marker);
    fuzzApp.tenants.push(tenant);
    fuzzApp.view.secrets.push(...tenant.secrets);
    fuzzApp.view.messages.push(...tenant.messages);
  } catch {
    // The app's state after thousands of hostile requests may refuse a step; the old tenants serve.
  }
}

/** Text safe to put in a URL whatever it holds: a lone surrogate becomes the bytes of one (not UTF-8). */
function encode(text: string): string {
  let out = '';
  for (const char of text) out += /^[\ud800-\udfff]$/.test(char) ? '%ED%A0%80' : encodeURIComponent(char);
  return out;
}

/** A value for what a field or parameter names: the acting app's entity, the other app's, or junk. */
function entityValue(r: Rng, kind: Kind, own: Tenant, other: Tenant, tame = false): unknown {
  const roll = tame ? 0.15 + r.next() * 0.6 : r.next();
  if (roll < 0.15) return junkValue(r);
  const values = kindValues(roll < 0.7 ? own : other)[kind];
  return values.length > 0 ? r.pick(values) : r.pick(NASTY_TEXT);
}

/** A value that fits `schema` (mostly), its text carrying the acting app's marker. */
function schemaValue(r: Rng, schema: any, marker: string, depth: number): unknown {
  if (schema?.enum) return r.pick(schema.enum);
  if (schema?.const !== undefined) return schema.const;
  if (schema?.anyOf) return schemaValue(r, r.pick(schema.anyOf), marker, depth);
  switch (schema?.type) {
    case 'string': {
      if (schema.format === 'uri') return `https://example.com/${marker}`;
      const base = schema.pattern ? `fz${marker}${r.int(1000)}` : `fuzz ${marker} ${r.pick(['ü漢字🚀', 'x', '<b>'])}`;
      return base.slice(0, Math.max(1, schema.maxLength ?? 200));
    }
    case 'integer':
    case 'number':
      return Math.max(schema.minimum ?? 0, Math.min(schema.maximum ?? 1000, r.int(1000)));
    case 'boolean':
      return r.chance(0.5);
    case 'array':
      return depth > 3 ? [] : Array.from({ length: r.int(3) }, () => schemaValue(r, schema.items, marker, depth + 1));
    case 'object':
      return depth > 3 ? {} : { [`k${r.int(5)}`]: `v ${marker}` };
    default:
      return `any ${marker}`;
  }
}

/** A body from the operation's schema: each field named, junk, or left out; one field may be the HOLE. */
function schemaBody(r: Rng, schema: any, own: Tenant, other: Tenant, tame: boolean, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const required = new Set<string>(schema?.required ?? []);
  for (const [name, property] of Object.entries<any>(schema?.properties ?? {})) {
    if (!required.has(name) && r.chance(0.4)) continue;
    const rule = BODY_RULES[name];
    const roll = r.next();
    if (roll < 0.12 && !tame) out[name] = junkValue(r);
    else if (rule && 'kind' in rule) {
      const value = entityValue(r, rule.kind, own, other, tame);
      out[name] = property?.type === 'array' && !Array.isArray(value) ? [value] : value;
    } else if (depth < 2 && (property?.type === 'object' || property?.additionalProperties?.properties)) {
      const record = property.additionalProperties?.properties ? property.additionalProperties : property;
      const built = schemaBody(r, record, own, other, tame, depth + 1);
      out[name] = record === property ? built : { [String(built[record.required?.[0]] ?? 'k')]: built };
    } else out[name] = schemaValue(r, property, own.marker, depth);
  }
  if (!tame && r.chance(0.15)) out[r.pick(['app_id', 'appId', 'id', 'key_hash', 'created_at', 'extra', 'uid', ...NASTY_TEXT])] = junkValue(r);
  return out;
}

const HOSTILE_HEADER_FAMILIES = ['appId header', 'host', 'duplicate apiKey', 'huge header', 'onBehalfOf', 'content-length'] as const;

/** Adds one kind of hostile header to `headers` (the acting app's host and key already in it). */
function hostileHeaders(r: Rng, headers: Record<string, string | string[]>, self: FuzzApp, other: FuzzApp, hasBody: boolean): string {
  const family = r.pick(HOSTILE_HEADER_FAMILIES.filter((f) => hasBody || f !== 'content-length'));
  const id = self.app.appId;
  switch (family) {
    case 'appId header':
      headers.host = r.pick(['localhost', '127.0.0.1:3000', '[::1]', `chat.${TEST_DOMAIN}`]);
      headers.appid = r.pick([
        `${id}\u0000`,
        'a\u0000b',
        `${id}\ud800`,
        'x'.repeat(r.pick([64, 10_000, 100_000])),
        'ü漢字',
        ` ${id.toUpperCase()} `,
        other.app.appId,
        id,
        '-',
        `${id}.${other.app.appId}`,
      ]);
      if (r.chance(0.2)) headers.appid = [String(headers.appid), other.app.appId];
      break;
    case 'host':
      headers.host = r.pick([
        `${hostOf(self.app)}:443`,
        hostOf(self.app).toUpperCase(),
        `${hostOf(self.app)}.`,
        `${id}.api-eu.${TEST_DOMAIN}`,
        hostOf(other.app),
        `${hostOf(self.app)}.evil.example`,
        `evil.example@${hostOf(self.app)}`,
        `${id}\u0000.api-${TEST_REGION}.${TEST_DOMAIN}`,
        `${'x'.repeat(70_000)}.api-${TEST_REGION}.${TEST_DOMAIN}`,
        '',
        ' ',
        `${id}..api-${TEST_REGION}.${TEST_DOMAIN}`,
      ]);
      if (r.chance(0.3)) headers.appid = other.app.appId;
      break;
    case 'duplicate apiKey': {
      const key = String(headers.apikey ?? self.app.apiKey);
      headers.apikey = r.pick([
        [key, 'junk'],
        ['junk', key],
        [key, key],
        [key, `${key}\u0000`],
      ]);
      break;
    }
    case 'huge header':
      headers[r.pick(['x-junk', 'apikey', 'onbehalfof', 'user-agent', 'accept'])] = r.pick(['a', '\u0000', 'ü']).repeat(r.pick([8_192, 65_536]));
      break;
    case 'onBehalfOf':
      headers.onbehalfof = r.pick(['\u0000', 'a\u0000b', 'x\ud800', ' ', '', 'UPPER', 'x'.repeat(200), 'ü漢字', ...other.tenants.at(-1)!.users.slice(0, 2), ' padded ']);
      if (r.chance(0.2)) headers.onbehalfof = [String(headers.onbehalfof), self.tenants.at(-1)!.users[0]!];
      break;
    case 'content-length':
      headers['content-length'] = r.pick(['0', '1', '5', '999999999', '-1', 'abc', '18446744073709551616']);
      break;
  }
  return `headers: ${family}`;
}

/** Request `index` of `seed`. */
export function fuzzRequest(fuzz: Fuzz, seed: number, index: number): FuzzRequest {
  const r = requestRng(seed, index);
  const op = fuzz.operations[index % fuzz.operations.length]!;
  const actorIsA = r.chance(0.5);
  const self = actorIsA ? fuzz.a : fuzz.b;
  const other = actorIsA ? fuzz.b : fuzz.a;
  const own = self.tenants.at(-1)!;
  const foreign = other.tenants.at(-1)!;
  const families: string[] = [];
  // A quarter of the requests are tame (the schema's values, this app's entities mostly), so that
  // writes succeed and race each other, and deletes of what others name.
  const tame = r.chance(0.25);
  if (tame) families.push('body: tame');
  const url = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const rule = PATH_RULES[name];
    if (!tame && r.chance(0.2)) {
      families.push('path: junk');
      return r.pick(PATH_JUNK);
    }
    const value = rule && 'kind' in rule ? entityValue(r, rule.kind, own, foreign, tame) : rule && 'plain' in rule && rule.example !== undefined ? rule.example : r.pick(['admin', 'participant', 'x']);
    return encode(typeof value === 'string' ? value : (JSON.stringify(value) ?? 'x'));
  });
  const query: string[] = [];
  for (const parameter of op.parameters) {
    if (parameter.in !== 'query' || !r.chance(0.35)) continue;
    const rule = QUERY_RULES[parameter.name];
    const value = !tame && r.chance(0.5) ? r.pick(QUERY_JUNK) : rule && 'kind' in rule ? entityValue(r, rule.kind, own, foreign) : schemaValue(r, parameter.schema, self.marker, 0);
    query.push(`${encodeURIComponent(parameter.name)}=${encode(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''))}`);
    if (r.chance(0.1)) query.push(`${encodeURIComponent(parameter.name)}=${encode(r.pick(QUERY_JUNK))}`);
  }
  if (query.length > 0) families.push('query');
  const headers: Record<string, string | string[]> = { host: hostOf(self.app) };
  const keyRoll = r.next();
  let actor: FuzzRequest['actor'] = actorIsA ? 'A' : 'B';
  if (keyRoll < 0.85 || tame) headers.apikey = self.app.apiKey;
  else if (keyRoll < 0.93) headers.apikey = self.app.authKey;
  else if (keyRoll < 0.97) {
    // The other app's key on this app's host: refused, and its answer must hold nothing of this app's.
    headers.apikey = other.app.apiKey;
    actor = actorIsA ? 'B' : 'A';
    families.push('key: the other app’s');
  } else {
    actor = 'nobody';
    families.push('key: none');
  }
  if (r.chance(0.5)) headers.onbehalfof = String(entityValue(r, 'user', own, foreign, tame));
  let payload: string | Buffer | undefined;
  if (op.body && tame) {
    payload = JSON.stringify(schemaBody(r, op.body, own, foreign, true));
    headers['content-type'] = 'application/json';
  } else if (op.body || op.method !== 'GET') {
    const holed = r.chance(0.5);
    const built: unknown = op.body ? schemaBody(r, op.body, own, foreign, false) : r.chance(0.5) ? {} : junkValue(r);
    if (holed && built && typeof built === 'object' && !Array.isArray(built)) (built as Record<string, unknown>)[r.pick([...Object.keys(built), 'metadata', 'data'])] = HOLE;
    const json = JSON.stringify(built);
    if (r.chance(0.45)) {
      const raw = rawBody(r, json, holed && json.includes('hole'));
      payload = raw.payload;
      if (raw.contentType !== undefined) headers['content-type'] = raw.contentType;
      families.push(raw.family);
    } else {
      payload = json.replace(JSON.stringify(HOLE), JSON.stringify(junkValue(r)));
      headers['content-type'] = 'application/json';
      families.push('body: schema with junk');
    }
  }
  // Not with the other app's key: a host or appId header naming the other app would make it the
  // other app's own request, carrying this app's marker.
  if (!tame && actor === (actorIsA ? 'A' : 'B') && r.chance(0.2)) families.push(hostileHeaders(r, headers, self, other, payload !== undefined));
  const search = query.length > 0 ? `?${query.join('&')}` : '';
  return {
    index,
    operationId: op.operationId,
    actor,
    families,
    inject: { method: op.method as 'GET', url: `${url}${search}`, headers, ...(payload !== undefined ? { payload } : {}) },
  };
}

/** The request as JSON a failure prints: `app.inject(...)` of it makes it again (a Buffer body as base64). */
export function replayOf(seed: number, request: FuzzRequest): string {
  const payload = request.inject.payload;
  const shown = Buffer.isBuffer(payload) ? { payloadBase64: payload.toString('base64') } : { payload };
  const text = JSON.stringify({ seed, index: request.index, operationId: request.operationId, method: request.inject.method, url: request.inject.url, headers: request.inject.headers, ...shown });
  return text.length > 4000 ? `${text.slice(0, 4000)}… (${text.length} characters; run the seed from this index to see it whole)` : text;
}

/** The failures of one answer: every answer below 500 in the vendor's shape, and none holding the other app's data. */
export function answerFailures(fuzz: Fuzz, request: FuzzRequest, response: LightMyRequestResponse): Array<Omit<FuzzFailure, 'replay'>> {
  const others = request.actor === 'A' ? [fuzz.b] : request.actor === 'B' ? [fuzz.a] : [fuzz.a, fuzz.b];
  const found = new Map<string, FuzzFailure['kind']>();
  for (const other of others) {
    for (const message of commonFailures(other.view, response)) {
      found.set(message, message.startsWith('answered') ? '5xx' : message.includes("vendor's shape") ? 'shape' : message.includes('counts other than') ? 'counts' : 'cross-app');
    }
  }
  return [...found].map(([message, kind]) => ({ kind, message }));
}

/** Keys and tokens an answer hands out become their app's secrets: no answer to the other app may hold them. */
function learn(fuzz: Fuzz, request: FuzzRequest, response: LightMyRequestResponse): void {
  if (response.statusCode >= 300 || request.actor === 'nobody') return;
  const data = (() => {
    try {
      return (response.json() as { data?: Record<string, unknown> }).data;
    } catch {
      return undefined;
    }
  })();
  const app = request.actor === 'A' ? fuzz.a : fuzz.b;
  for (const field of ['apiKey', 'authToken']) {
    const value = data?.[field];
    if (typeof value === 'string' && value.length >= 16 && !value.includes('*')) app.view.secrets.push(value);
  }
}

/** Runs requests `from` to `from + requests - 1` of `seed`, `concurrency` at a time, and sums them up. */
export async function runFuzz(fuzz: Fuzz, options: FuzzOptions): Promise<FuzzSummary> {
  const { seed, requests, concurrency = 4, reseedEvery = 5000, keepFailures = 20 } = options;
  const from = options.from ?? 0;
  const summary: FuzzSummary = {
    seed,
    requests: 0,
    statuses: {},
    fivexx: 0,
    crossApp: 0,
    shape: 0,
    counts: 0,
    errorCodes: {},
    families: {},
    operations: {},
    failures: [],
    durationMs: 0,
  };
  const count = (table: Record<string, number>, key: string) => (table[key] = (table[key] ?? 0) + 1);
  const started = Date.now();
  let next = from;
  let reseeding: Promise<void> | undefined;
  const worker = async () => {
    for (;;) {
      const index = next++;
      if (index >= from + requests) return;
      if (index > from && index % reseedEvery === 0) reseeding = Promise.all([reseed(fuzz.t, fuzz.a), reseed(fuzz.t, fuzz.b)]).then(() => undefined);
      if (reseeding) await reseeding;
      const request = fuzzRequest(fuzz, seed, index);
      const response = await fuzz.t.app.inject(request.inject);
      summary.requests++;
      count(summary.statuses, `${Math.floor(response.statusCode / 100)}xx`);
      count(summary.operations, request.operationId);
      for (const family of request.families) count(summary.families, family);
      if (response.statusCode >= 400) {
        try {
          count(summary.errorCodes, String((response.json() as { error?: { code?: unknown } }).error?.code));
        } catch {
          count(summary.errorCodes, '(not JSON)');
        }
      }
      learn(fuzz, request, response);
      const failures = answerFailures(fuzz, request, response);
      for (const failure of failures) {
        if (failure.kind === '5xx') summary.fivexx++;
        else if (failure.kind === 'cross-app') summary.crossApp++;
        else if (failure.kind === 'shape') summary.shape++;
        else summary.counts++;
        if (summary.failures.length < keepFailures) summary.failures.push({ ...failure, replay: replayOf(seed, request) });
      }
      if (options.onProgress && summary.requests % 10_000 === 0) options.onProgress(summary.requests, summary);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  summary.durationMs = Date.now() - started;
  return summary;
}
