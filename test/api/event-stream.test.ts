import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { buildApp, type ParleyApp } from '../../src/app.js';
import { eventsCommand } from '../../src/cli-events.js';
import { createServices } from '../../src/container.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { silentLogger } from '../../src/domain/context.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, hostOf, TEST_DOMAIN, TEST_REGION, type TestApp } from '../helpers/app.js';
import { TEST_ENGINE } from '../helpers/db.js';
import { newGroup, newUids } from '../helpers/factories.js';

// GET /v3/events: the app's event log as Server-Sent Events, over a real socket.

let t: TestApp;
let port: number;
before(async () => {
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as { port: number }).port;
});
after(async () => {
  await t.close();
});

interface Received {
  id: string;
  event: string;
  data: any;
}

/** An open stream: the events received so far, waiting for more, closing. */
interface Stream {
  status: number;
  headers: http.IncomingHttpHeaders;
  events: Received[];
  /** Resolves once `n` events have arrived (rejects after a few seconds). */
  waitFor(n: number): Promise<Received[]>;
  close(): void;
}

function openStream(app: CreatedApp, options: { query?: string; lastEventId?: string; key?: string; port?: number } = {}): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: hostOf(app), apikey: options.key ?? app.apiKey, accept: 'text/event-stream' };
    if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
    const request = http.get({ host: '127.0.0.1', port: options.port ?? port, path: `/v3/events${options.query ?? ''}`, headers }, (response) => {
      const events: Received[] = [];
      const waiting: Array<{ n: number; resolve: (events: Received[]) => void }> = [];
      let buffer = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields = new Map<string, string>();
          for (const line of block.split('\n')) {
            if (line.startsWith(':') || line === '') continue;
            const colon = line.indexOf(':');
            fields.set(line.slice(0, colon), line.slice(colon + 2));
          }
          if (fields.has('data')) events.push({ id: fields.get('id')!, event: fields.get('event')!, data: JSON.parse(fields.get('data')!) });
        }
        for (const waiter of [...waiting]) {
          if (events.length >= waiter.n) {
            waiting.splice(waiting.indexOf(waiter), 1);
            waiter.resolve(events.slice(0, waiter.n));
          }
        }
      });
      resolve({
        status: response.statusCode!,
        headers: response.headers,
        events,
        waitFor(n) {
          if (events.length >= n) return Promise.resolve(events.slice(0, n));
          return new Promise((resolveWait, rejectWait) => {
            const timer = setTimeout(() => rejectWait(new Error(`waited for ${n} events, got ${JSON.stringify(events.map((e) => e.event))}`)), 5_000);
            waiting.push({ n, resolve: (got) => (clearTimeout(timer), resolveWait(got)) });
          });
        },
        close() {
          request.destroy();
        },
      });
    });
    request.on('error', reject);
  });
}

async function ok(app: CreatedApp, url: string, options: Parameters<TestApp['call']>[2] = {}): Promise<any> {
  const response = await t.call(app, url, options);
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
}
const send = (app: CreatedApp, sender: string, receiver: string, text: string) =>
  ok(app, '/v3/messages', { method: 'POST', onBehalfOf: sender, body: { receiver, receiverType: 'user', data: { text } } });

describe('the live event stream', () => {
  it('streams the app’s events in order, as webhook payloads, and none of another app', async () => {
    const stream = await openStream(t.appA);
    try {
      assert.equal(stream.status, 200);
      assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
      const [alice, bob] = await newUids(t, t.appA, 2);
      const [carol, dave] = await newUids(t, t.appB, 2);
      await send(t.appB, carol!, dave!, 'other app');
      const first = await send(t.appA, alice!, bob!, 'one');
      const group = await newGroup(t, t.appA, {}, alice);
      const second = await send(t.appA, bob!, alice!, 'two');
      const events = await stream.waitFor(3);
      assert.deepEqual(
        events.map((e) => e.event),
        ['message_sent', 'group_created', 'message_sent'],
      );
      assert.ok(BigInt(events[0]!.id) < BigInt(events[1]!.id) && BigInt(events[1]!.id) < BigInt(events[2]!.id));
      const payload = events[0]!.data;
      assert.deepEqual(Object.keys(payload).sort(), ['appId', 'data', 'region', 'trigger']);
      assert.deepEqual([payload.trigger, payload.appId, payload.region], ['message_sent', t.appA.appId, TEST_REGION]);
      assert.equal(payload.data.message.id, first.id);
      assert.equal(payload.data.message.data.text, 'one');
      assert.equal(payload.data.message.data.entities.sender.entity.uid, alice);
      assert.equal(events[1]!.data.data.group.guid, group.guid);
      assert.equal(events[2]!.data.data.message.id, second.id);
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(stream.events.length, 3, 'nothing of app B');
    } finally {
      stream.close();
    }
  });

  it('filters by trigger, and refuses an unknown one', async () => {
    const stream = await openStream(t.appA, { query: '?triggers=group_created,user_blocked' });
    try {
      const [alice, bob] = await newUids(t, t.appA, 2);
      await send(t.appA, alice!, bob!, 'not streamed');
      await ok(t.appA, `/v3/users/${alice}/blockedusers`, { method: 'POST', body: { blockedUids: [bob] } });
      const events = await stream.waitFor(1);
      assert.deepEqual(
        events.map((e) => e.event),
        ['user_blocked'],
      );
    } finally {
      stream.close();
    }
    const refused = await t.call(t.appA, '/v3/events', { query: { triggers: 'message_sent,no_such_trigger' } });
    assert.equal(refused.statusCode, 400);
    assert.equal(body(refused).error.code, 'ERR_BAD_REQUEST');
  });

  it('resumes after Last-Event-ID with what happened meanwhile, from the log', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const stream = await openStream(t.appA);
    await send(t.appA, alice!, bob!, 'seen');
    const [seen] = await stream.waitFor(1);
    stream.close();
    const missed = [await send(t.appA, alice!, bob!, 'missed 1'), await send(t.appA, bob!, alice!, 'missed 2')];
    const resumed = await openStream(t.appA, { lastEventId: seen!.id });
    try {
      const events = await resumed.waitFor(2);
      assert.deepEqual(
        events.map((e) => e.data.data.message.id),
        missed.map((m) => m.id),
      );
      const later = await send(t.appA, alice!, bob!, 'live again');
      assert.equal((await resumed.waitFor(3))[2]!.data.data.message.id, later.id);
    } finally {
      resumed.close();
    }
  });

  it('parley events tail prints the app’s events, one JSON payload a line, from the log after --after', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const before = await send(t.appA, alice!, bob!, 'before');
    const first = await t.database.db.selectFrom('events').select('id').where('app_id', '=', t.appA.appId).where('message_id', '=', before.id).executeTakeFirstOrThrow();
    // The command's own services, as the CLI has (it stops their feed when it ends).
    const services = createServices(t.database, { region: TEST_REGION });
    const lines: string[] = [];
    let stop!: () => void;
    const until = new Promise<void>((resolve) => (stop = resolve));
    const io = { context: (appId: string) => ({ appId, requestId: 'cli', log: silentLogger }), usage: (message: string) => new Error(message) };
    const running = eventsCommand(services, io, 'tail', { app: t.appA.appId, triggers: 'message_sent', after: String(Number(first.id) - 1) }, (line) => lines.push(line), until);
    const later = await send(t.appA, bob!, alice!, 'later');
    for (let waited = 0; lines.length < 2 && waited < 5_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    stop();
    assert.equal(await running, 0);
    const printed = lines.map((line) => JSON.parse(line));
    assert.deepEqual(
      printed.map((p) => [p.trigger, p.data.message.id]),
      [
        ['message_sent', before.id],
        ['message_sent', later.id],
      ],
    );
    assert.equal(printed[0].id, String(first.id));
    await assert.rejects(
      eventsCommand(services, io, 'tail', { app: t.appA.appId, triggers: 'nope' }, () => {}, until),
      /unknown trigger: nope/,
    );
  });

  it('takes only a fullAccess key of the app, and refuses a bad Last-Event-ID', async () => {
    assert.equal(body(await t.call(t.appA, '/v3/events', { key: 'auth' })).error.code, 'AUTH_ERR_NO_ACCESS');
    for (const key of ['none', { literal: t.appB.apiKey }] as const) {
      const response = await t.call(t.appA, '/v3/events', { key });
      assert.equal(response.statusCode, 401, response.body);
    }
    for (const lastEventId of ['abc', '-1', '1'.repeat(25), '9'.repeat(19)]) {
      const response = await t.call(t.appA, '/v3/events', { headers: { 'last-event-id': lastEventId } });
      assert.equal(body(response).error.code, 'ERR_BAD_REQUEST', lastEventId);
    }
  });

  it('resuming after another app’s event id sends only the app’s own events', async () => {
    const [carol, dave] = await newUids(t, t.appB, 2);
    const [alice, bob] = await newUids(t, t.appA, 2);
    const inB = await send(t.appB, carol!, dave!, 'b');
    const bEvent = await t.database.db.selectFrom('events').select('id').where('app_id', '=', t.appB.appId).where('message_id', '=', inB.id).executeTakeFirstOrThrow();
    await send(t.appB, dave!, carol!, 'b again');
    const mine = await send(t.appA, alice!, bob!, 'a');
    const stream = await openStream(t.appA, { lastEventId: String(Number(bEvent.id) - 1) });
    try {
      const events = await stream.waitFor(1);
      assert.equal(events[0]!.data.data.message.id, mine.id);
      assert.equal(events[0]!.data.appId, t.appA.appId);
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(stream.events.length, 1);
    } finally {
      stream.close();
    }
  });
});

describe('a stream and the shutdown', () => {
  it('counts a stream as a request in flight only while it is open, so a server that served streams drains at once', async () => {
    const parley = await buildApp({ config: { region: TEST_REGION, domain: TEST_DOMAIN, bodyLimit: 1024 * 1024 }, database: t.database });
    try {
      await parley.app.listen({ port: 0, host: '127.0.0.1' });
      const streamPort = (parley.app.server.address() as { port: number }).port;
      const streams = await Promise.all([0, 1, 2].map(() => openStream(t.appA, { port: streamPort })));
      assert.equal(await parley.drained(0), false, 'open streams are in flight');
      for (const stream of streams) stream.close();
      assert.equal(await parley.drained(5_000), true, 'closed streams are not');
      // One still open when the server closes: the shutdown ends it, and nothing waits for it.
      await openStream(t.appA, { port: streamPort });
      const closing = parley.app.close();
      assert.equal(await parley.drained(5_000), true);
      await closing;
    } finally {
      await parley.app.close();
    }
  });
});

/** The feed's pace in the tests of its wake-ups: once still for a second, it would not poll again for ten minutes. */
const ASLEEP = { pollMs: 25, idlePollMs: 600_000 };
const quietSpell = () => new Promise((resolve) => setTimeout(resolve, 1_500));

describe('waking the feed', () => {
  it('streams an event committed after a quiet spell at once, not at the next idle poll', async () => {
    const quiet = await createTestApp({ eventFeedPace: ASLEEP });
    try {
      await quiet.app.listen({ port: 0, host: '127.0.0.1' });
      const stream = await openStream(quiet.appA, { port: (quiet.app.server.address() as { port: number }).port });
      try {
        const [alice, bob] = await newUids(quiet, quiet.appA, 2);
        await quietSpell();
        const sent = await quiet.call(quiet.appA, '/v3/messages', { method: 'POST', onBehalfOf: alice!, body: { receiver: bob!, receiverType: 'user', data: { text: 'after a quiet spell' } } });
        assert.equal(sent.statusCode, 200, sent.body);
        const [event] = await stream.waitFor(1);
        assert.equal(event!.data.data.message.id, body(sent).data.id);
      } finally {
        stream.close();
      }
    } finally {
      await quiet.close();
    }
  });
});

describe('where a stream without Last-Event-ID starts', () => {
  // The feed asleep (a quiet spell with ten minutes between idle polls), so its safe id lags
  // behind the events the test commits straight into the log (no request wakes it): a stream
  // opened then must not send them, though they are above the safe id it starts from.
  let quiet: TestApp;
  let quietPort: number;
  before(async () => {
    quiet = await createTestApp({ eventFeedPace: ASLEEP });
    await quiet.app.listen({ port: 0, host: '127.0.0.1' });
    quietPort = (quiet.app.server.address() as { port: number }).port;
    await quiet.services.eventFeed.ready(silentLogger);
  });
  after(async () => {
    await quiet?.close();
  });

  /** Events of app A committed into the log directly, in one transaction: their ids. */
  const commitEvents = async (n: number): Promise<bigint[]> => {
    const result = await sql<{ id: string }>`
      insert into events (app_id, trigger, data)
      select ${quiet.appA.appId}, 'user_blocked', json_build_object('n', g) from generate_series(1, ${n}) g
      returning id`.execute(quiet.database.db);
    return result.rows.map((row) => BigInt(row.id));
  };

  it('sends none of the events committed before it answered, though the feed had not passed them, and those committed after', async () => {
    await quietSpell();
    const before = await commitEvents(3);
    const safe = quiet.services.eventFeed.safeId!;
    assert.ok(safe < before[0]!, `the feed's safe id ${safe} lags behind the events committed before the stream (${before.join(', ')})`);
    const stream = await openStream(quiet.appA, { port: quietPort });
    try {
      assert.equal(stream.status, 200);
      // A send wakes the feed, which passes both the earlier events and the send's.
      const [alice, bob] = await newUids(quiet, quiet.appA, 2);
      const sent = await quiet.call(quiet.appA, '/v3/messages', { method: 'POST', onBehalfOf: alice!, body: { receiver: bob!, receiverType: 'user', data: { text: 'after the answer' } } });
      assert.equal(sent.statusCode, 200, sent.body);
      const [first] = await stream.waitFor(1);
      assert.equal(first!.event, 'message_sent', `the first event is the send, not one committed before: ${JSON.stringify(first)}`);
      assert.equal(first!.data.data.message.id, body(sent).data.id);
      assert.ok(quiet.services.eventFeed.safeId! >= before[2]!, 'the feed has passed the earlier events');
      // Later events committed straight into the log come too (woken by the next send).
      const after = await commitEvents(2);
      const again = await quiet.call(quiet.appA, '/v3/messages', { method: 'POST', onBehalfOf: bob!, body: { receiver: alice!, receiverType: 'user', data: { text: 'later' } } });
      assert.equal(again.statusCode, 200, again.body);
      const events = await stream.waitFor(4);
      assert.deepEqual(
        events.slice(1, 3).map((e) => BigInt(e.id)),
        after,
      );
      assert.equal(events[3]!.data.data.message.id, body(again).data.id);
      assert.ok(
        stream.events.every((e) => !before.includes(BigInt(e.id))),
        'none of the events committed before',
      );
    } finally {
      stream.close();
    }
  });

  it('sends an event whose transaction was still running when it answered, once that commits', {
    skip: TEST_ENGINE !== 'postgres' && 'PostgreSQL only: PGlite runs one transaction at a time',
  }, async () => {
    await quietSpell();
    const writer = new pg.Client({ connectionString: quiet.url });
    await writer.connect();
    try {
      const committed = await commitEvents(1);
      await writer.query('begin');
      const running = BigInt((await writer.query(`insert into events (app_id, trigger, data) values ($1, 'user_blocked', '{}') returning id`, [quiet.appA.appId])).rows[0].id);
      assert.ok(running > committed[0]! && quiet.services.eventFeed.safeId! < committed[0]!);
      const stream = await openStream(quiet.appA, { port: quietPort });
      try {
        await writer.query('commit');
        quiet.services.eventFeed.wake();
        const [event] = await stream.waitFor(1);
        assert.equal(BigInt(event!.id), running, 'the running transaction’s event, not the committed one');
      } finally {
        stream.close();
      }
    } finally {
      await writer.query('rollback').catch(() => undefined);
      await writer.end();
    }
  });
});

/**
 * A second node (its own pool and app on the same database, its feed at `pace`) holds a
 * stream; the first node commits a send (after a quiet spell, when asked): the stream gets it.
 */
async function streamedOnOtherNode(text: string, options: { pace?: typeof ASLEEP; quietFirst?: boolean } = {}): Promise<void> {
  let database: Database | undefined;
  let other: ParleyApp | undefined;
  try {
    database = await openDatabase({ engine: 'postgres', url: t.url!, poolSize: 2, log: silentLogger });
    other = await buildApp({
      config: { region: TEST_REGION, domain: TEST_DOMAIN, bodyLimit: 1024 * 1024 },
      database,
      ...(options.pace ? { eventFeedPace: options.pace } : {}),
    });
    await other.app.listen({ port: 0, host: '127.0.0.1' });
    const stream = await openStream(t.appA, { port: (other.app.server.address() as { port: number }).port });
    try {
      const [alice, bob] = await newUids(t, t.appA, 2);
      if (options.quietFirst) await quietSpell();
      const sent = await send(t.appA, alice!, bob!, text);
      const [event] = await stream.waitFor(1);
      assert.equal(event!.data.data.message.id, sent.id);
    } finally {
      stream.close();
    }
  } finally {
    await other?.app.close();
    await database?.close();
  }
}

describe('the live event stream across processes', { skip: TEST_ENGINE !== 'postgres' && 'PostgreSQL only: PGlite is one process' }, () => {
  it('streams on one node what another node committed', async () => {
    await streamedOnOtherNode('from the first node');
  });

  it('streams on a quiet node, woken by NOTIFY, what another node committed', async () => {
    await streamedOnOtherNode('woken from the first node', { pace: ASLEEP, quietFirst: true });
  });
});
