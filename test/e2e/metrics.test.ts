/**
 * The metrics (docs/metrics.md) and readiness of a running server, over real sockets: GET /metrics
 * on its own port, parsed strictly as Prometheus's text exposition, its series present and
 * moving under load; /readyz answering 503 while the server drains.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { silentLogger } from '../../src/domain/context.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { callServer } from '../helpers/cli.js';
import { serverDeployment } from '../helpers/db.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

/** One sample of the exposition: its series name, labels and value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Family {
  type: string;
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/**
 * Prometheus's text exposition format (0.0.4), read strictly: every family has one HELP and one
 * TYPE before its samples, names and label names are valid, label values are quoted with only
 * \\, \" and \n escaped, values are numbers (or ±Inf, NaN), a sample belongs to the family
 * declared last (histograms: _bucket with an `le`, _sum, _count), no series appears twice, and
 * each histogram's buckets are cumulative and end at +Inf equal to its _count.
 */
function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  let current: { name: string; family: Family } | undefined;
  assert.ok(text.endsWith('\n'), 'the exposition ends with a newline');
  for (const [index, line] of text.slice(0, -1).split('\n').entries()) {
    const where = `line ${index + 1}: ${line}`;
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta as unknown as [string, string, string, string];
      assert.match(name, NAME, where);
      let family = families.get(name);
      if (!family) {
        family = { type: '', help: '', samples: [] };
        families.set(name, family);
      } else assert.equal(family.samples.length, 0, `HELP/TYPE after samples: ${where}`);
      if (kind === 'TYPE') {
        assert.equal(family.type, '', `two TYPE lines: ${where}`);
        assert.ok(['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest), where);
        family.type = rest;
      } else family.help = rest;
      current = { name, family };
      continue;
    }
    assert.ok(!line.startsWith('#'), `a comment other than HELP or TYPE: ${where}`);
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( -?\d+)?$/.exec(line);
    assert.ok(sample, `not a sample: ${where}`);
    const [, name, , labelText, valueText] = sample as unknown as [string, string, string | undefined, string | undefined, string];
    assert.ok(current, `a sample before any TYPE: ${where}`);
    const suffix = name.slice(current.name.length);
    assert.ok(name.startsWith(current.name), `a sample of another family: ${where}`);
    const allowed = current.family.type === 'histogram' ? ['_bucket', '_sum', '_count'] : current.family.type === 'summary' ? ['', '_sum', '_count'] : [''];
    assert.ok(allowed.includes(suffix), `suffix ${suffix} in a ${current.family.type}: ${where}`);
    const labels: Record<string, string> = {};
    let rest = labelText ?? '';
    while (rest.length > 0) {
      const label = /^([^=]+)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/.exec(rest);
      assert.ok(label, `bad labels: ${where}`);
      const [whole, labelName, raw] = label as unknown as [string, string, string];
      assert.match(labelName, LABEL_NAME, where);
      assert.ok(!(labelName in labels), `label twice: ${where}`);
      labels[labelName] = raw.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
      rest = rest.slice(whole.length);
    }
    const value = valueText === '+Inf' ? Infinity : valueText === '-Inf' ? -Infinity : valueText === 'NaN' ? NaN : Number(valueText);
    assert.ok(valueText === 'NaN' || !Number.isNaN(value), `value ${valueText}: ${where}`);
    if (current.family.type === 'histogram' && suffix === '_bucket') assert.ok('le' in labels, `a bucket without le: ${where}`);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    assert.ok(!seen.has(key), `a series twice: ${where}`);
    seen.add(key);
    current.family.samples.push({ name, labels, value });
  }
  for (const [name, family] of families) {
    assert.notEqual(family.type, '', `${name} has no TYPE`);
    assert.notEqual(family.help, '', `${name} has no HELP`);
    if (family.type !== 'histogram') continue;
    const series = new Map<string, Sample[]>();
    for (const sample of family.samples.filter((s) => s.name.endsWith('_bucket'))) {
      const { le: _le, ...rest } = sample.labels;
      const key = JSON.stringify(Object.entries(rest).sort());
      series.set(key, [...(series.get(key) ?? []), sample]);
    }
    for (const [key, buckets] of series) {
      for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i]!.value >= buckets[i - 1]!.value, `${name}${key} buckets not cumulative`);
      assert.equal(buckets.at(-1)!.labels.le, '+Inf', `${name}${key} ends at +Inf`);
      const count = family.samples.find((s) => s.name === `${name}_count` && JSON.stringify(Object.entries(s.labels).sort()) === key);
      assert.equal(count?.value, buckets.at(-1)!.value, `${name}${key}: _count is the +Inf bucket`);
    }
  }
  return families;
}

/** The value of the sample of `family` whose labels include `labels` (undefined when there is none). */
function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}, sampleName = name): number | undefined {
  const sample = families.get(name)?.samples.find((s) => s.name === sampleName && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return sample?.value;
}

function scrape(port: number, pathName = '/metrics'): Promise<{ status: number; contentType: string; text: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: pathName }, (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type']), text }));
      })
      .on('error', reject);
  });
}

const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** A server of this test's engine on a fresh database, plain HTTP on loopback, with `env`. */
async function newServer(env: Record<string, string>, lines: string[] = []): Promise<RunningServer> {
  const { config } = await serverDeployment('parley-metrics', { PARLEY_WEBHOOK_ALLOW_PRIVATE: '1', ...env }, cleanups);
  const log = pino({ level: 'info' }, new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }));
  const server = await startServer(config, log);
  cleanups.push(() => server.close());
  return server;
}

describe('metrics', () => {
  let server: RunningServer;
  let receiver: Receiver;
  const agent = new http.Agent({ keepAlive: true });
  after(() => agent.destroy());

  before(async () => {
    receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    // A low import limit, so a third import call is refused (a rate-limit refusal to count).
    server = await newServer({ PARLEY_METRICS_PORT: '0', PARLEY_RATE_LIMITS: 'import=2' });
  });

  it('serves GET /metrics on its own port, valid Prometheus text whose series move under load', async () => {
    assert.ok(server.metricsPort !== undefined && server.metricsPort !== server.port);
    const app = server.defaultApp!;
    const call = (method: string, url: string, payload?: unknown, onBehalfOf?: string) => callServer(agent, server, app, method, url, payload, onBehalfOf);
    await server.services.webhooks.create({ appId: app.appId, requestId: 'test', log: silentLogger }, { id: 'metrics-hook', name: 'Metrics', webhookURL: receiver.url }, ['message_sent']);

    const first = await scrape(server.metricsPort!);
    assert.equal(first.status, 200);
    assert.match(first.contentType, /^text\/plain; version=0\.0\.4/);
    const before = parseExposition(first.text);

    for (const uid of ['ada', 'bob']) assert.equal((await call('POST', '/v3/users', { uid, name: uid })).status, 200);
    for (let i = 0; i < 20; i++)
      assert.equal((await call('POST', '/v3/messages', { receiver: 'bob', receiverType: 'user', category: 'message', type: 'text', data: { text: `hi ${i}` } }, 'ada')).status, 200);
    // The same page three times: read, read and kept, then sent from the copy (a hit).
    for (let i = 0; i < 3; i++) assert.equal((await call('GET', '/v3/users/bob/messages', undefined, 'ada')).status, 200);
    assert.equal((await call('GET', '/v3/users/nobody-here')).status, 404);
    assert.equal((await call('GET', '/no/such/route')).status, 404);
    const imports = [];
    for (let i = 0; i < 3; i++)
      imports.push((await call('POST', '/v3/data_import/users', { users: { [`imp-${i}`]: { uid: `imp-${i}`, name: 'Imported' }, [`bad-${i}`]: { uid: `bad-${i}` } } })).status);
    assert.deepEqual(imports, [200, 200, 429]);
    await receiver.waitFor((received) => received.length >= 20, 20_000);

    // The deliveries settle (and are counted) just after their receiver answered.
    let after = parseExposition((await scrape(server.metricsPort!)).text);
    for (let tries = 0; (sampleValue(after, 'parley_event_deliveries_total', { consumer: 'webhooks', outcome: 'delivered' }) ?? 0) < 20 && tries < 100; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = parseExposition((await scrape(server.metricsPort!)).text);
    }
    const moved = (name: string, labels: Record<string, string>, by: number, sample = name) => {
      const was = sampleValue(before, name, labels, sample) ?? 0;
      const now = sampleValue(after, name, labels, sample);
      assert.ok(now !== undefined, `${sample}${JSON.stringify(labels)} is exposed`);
      assert.ok(now - was >= by, `${sample}${JSON.stringify(labels)} moved by at least ${by}: ${was} → ${now}`);
    };
    // Requests by route template (never the ids), method and status, and their latency.
    moved('parley_http_requests_total', { route: '/v3/messages', method: 'POST', status: '200' }, 20);
    moved('parley_http_requests_total', { route: '/v3/users/:uid/messages', method: 'GET', status: '200' }, 3);
    moved('parley_http_requests_total', { route: '/v3/users/:uid', method: 'GET', status: '404' }, 1);
    moved('parley_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' }, 1);
    moved('parley_http_requests_total', { route: '/v3/data_import/users', method: 'POST', status: '429' }, 1);
    assert.ok(!after.get('parley_http_requests_total')!.samples.some((s) => /nobody|bob|ada/.test(s.labels.route!)), 'no id in a route label');
    assert.ok(!after.get('parley_http_requests_total')!.samples.some((s) => 'app' in s.labels), 'no app label unless asked for');
    moved('parley_http_request_duration_seconds', { route: '/v3/messages', method: 'POST' }, 20, 'parley_http_request_duration_seconds_count');
    moved('parley_http_request_duration_seconds', { route: '/v3/messages', method: 'POST', le: '+Inf' }, 20, 'parley_http_request_duration_seconds_bucket');
    // The database pool.
    moved('parley_db_pool_acquired_total', { pool: 'requests' }, 20);
    assert.ok((sampleValue(after, 'parley_db_pool_max_connections', { pool: 'requests' }) ?? 0) >= 1);
    for (const name of [
      'parley_db_pool_open_connections',
      'parley_db_pool_idle_connections',
      'parley_db_pool_waiting',
      'parley_db_pool_waits_total',
      'parley_db_pool_wait_seconds_total',
      'parley_db_pool_acquire_timeouts_total',
    ]) {
      assert.ok(sampleValue(after, name, { pool: 'requests' }) !== undefined, name);
    }
    // The coalesced sends: their batches and what waits.
    moved('parley_batcher_batch_size', { batcher: 'send' }, 1, 'parley_batcher_batch_size_count');
    moved('parley_batcher_batch_size', { batcher: 'send' }, 20, 'parley_batcher_batch_size_sum');
    for (const name of ['parley_batcher_queued', 'parley_batcher_in_flight', 'parley_batcher_stalled']) assert.equal(sampleValue(after, name, { batcher: 'send' }), 0, name);
    // The event log: its safe id moved with the sends, the webhooks' lag, deliveries and their attempts.
    assert.ok((sampleValue(after, 'parley_event_log_safe_id') ?? 0) > (sampleValue(before, 'parley_event_log_safe_id') ?? 0));
    assert.ok(sampleValue(after, 'parley_event_consumer_lag_events', { consumer: 'webhooks' }) !== undefined);
    moved('parley_event_deliveries_total', { consumer: 'webhooks', outcome: 'delivered' }, 20);
    moved('parley_event_fanned_out_total', { consumer: 'webhooks' }, 20);
    moved('parley_event_delivery_attempt_seconds', { consumer: 'webhooks', result: 'ok' }, 20, 'parley_event_delivery_attempt_seconds_count');
    assert.ok(sampleValue(after, 'parley_event_lanes_in_flight', { consumer: 'webhooks' }) !== undefined);
    // Rate limits, imports, caches.
    moved('parley_rate_limit_refusals_total', { class: 'import' }, 1);
    moved('parley_import_records_total', { kind: 'users', result: 'stored' }, 2);
    moved('parley_import_records_total', { kind: 'users', result: 'failed' }, 2);
    moved('parley_cache_lookups_total', { cache: 'credentials', result: 'hit' }, 20);
    moved('parley_cache_lookups_total', { cache: 'history_pages', result: 'hit' }, 1);
    moved('parley_cache_lookups_total', { cache: 'history_pages', result: 'miss' }, 2);
    assert.ok((sampleValue(after, 'parley_cache_entries', { cache: 'history_pages' }) ?? 0) >= 1);
    assert.ok((sampleValue(after, 'parley_cache_bytes', { cache: 'history_pages' }) ?? 0) > 0);
    // prom-client's default metrics: memory, CPU, the event loop's delay.
    for (const name of ['process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'process_cpu_seconds_total', 'nodejs_eventloop_lag_seconds', 'nodejs_eventloop_lag_p99_seconds']) {
      assert.ok(after.has(name), name);
    }
    moved('process_cpu_seconds_total', {}, 0.001);
  });

  it('answers 404 elsewhere on the metrics port', async () => {
    assert.equal((await scrape(server.metricsPort!, '/')).status, 404);
    assert.equal((await scrape(server.metricsPort!, '/v3/users')).status, 404);
  });

  it('labels the requests by app when PARLEY_METRICS_PER_APP is set', async () => {
    const perApp = await newServer({ PARLEY_METRICS_PORT: '0', PARLEY_METRICS_PER_APP: '1' });
    const app = perApp.defaultApp!;
    assert.equal((await callServer(agent, perApp, app, 'GET', '/v3/users')).status, 200);
    const families = parseExposition((await scrape(perApp.metricsPort!)).text);
    assert.equal(sampleValue(families, 'parley_http_requests_total', { route: '/v3/users', method: 'GET', status: '200', app: app.appId }), 1);
  });
});

describe('readiness over a socket', () => {
  it('answers /readyz 503 while the server drains, and /healthz stays liveness', async () => {
    const server = await newServer({});
    // The metrics are off unless PARLEY_METRICS_PORT is set.
    assert.equal(server.metricsPort, undefined);
    const get = (pathName: string) =>
      new Promise<number>((resolve, reject) => {
        http.get({ host: '127.0.0.1', port: server.port, path: pathName, agent: false }, (res) => (res.resume(), resolve(res.statusCode ?? 0))).on('error', reject);
      });
    assert.equal(await get('/healthz'), 200);
    assert.equal(await get('/readyz'), 200);
    // A request begun before the shutdown and finished during it: its connection is busy, so the
    // drain waits for it, and it is answered as every request arriving while draining is.
    const socket = net.connect(server.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('GET /readyz HTTP/1.1\r\nHost: localhost\r\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    const closed = server.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.write('\r\n');
    await new Promise((resolve) => socket.once('close', resolve));
    await closed;
    assert.match(answer, /^HTTP\/1\.1 503 /);
    assert.match(answer, /"code":"ERR_MISSION_FAILED"/);
    assert.match(answer, /"requestId":"[^"]+"/);
  });
});
