import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger } from '../../src/domain/context.js';
import type { GatewayRepository } from '../../src/repositories/gateway/gateway.repository.js';
import type { EventFeed } from '../../src/services/event-feed.js';
import type { RenderedEvent } from '../../src/services/event-payloads.js';
import type { GatewayConnection } from '../../src/services/gateway/frames.js';
import { GatewayHub } from '../../src/services/gateway/hub.js';
import type { Resumer } from '../../src/services/gateway/resume.js';

// The hub's index of a connecting user's groups against membership changes the feed hands out
// while those groups are read (services/gateway/pending-groups.ts): a fake feed and a read that
// the test finishes when it chooses, so each interleaving is made on purpose, not hoped for.

const APP = 'app';

function event(id: number, trigger: string, guid: string, data: Record<string, unknown>): RenderedEvent {
  return { id: String(id), appId: APP, trigger, conversationId: `group_${guid}`, payload: { trigger, data, appId: APP, region: 'us' } };
}
const added = (id: number, guid: string, uid: string) => event(id, 'group_member_added', guid, { members: { [uid]: { uid } } });
const kicked = (id: number, guid: string, uid: string) => event(id, 'group_member_kicked', guid, { members: { [uid]: { uid } } });
const deleted = (id: number, guid: string) => event(id, 'group_deleted', guid, { group: { guid } });
const message = (id: number, guid: string) => event(id, 'message_sent', guid, { message: { id: String(id) } });

/** A hub over a fake feed (its handed events under the test's control) and group reads the test answers. */
function setUp() {
  let hand: ((events: RenderedEvent[]) => void) | undefined;
  let subscribed!: () => void;
  const subscription = new Promise<void>((resolve) => (subscribed = resolve));
  const reads: Array<{ uid: string; answer(groups: string[]): void }> = [];
  let readStarted: (() => void) | undefined;
  const feed = {
    ready: async () => 0n,
    subscribe: async (subscriber: { send(events: RenderedEvent[]): void }) => {
      hand = (events) => subscriber.send(events);
      subscribed();
      return () => {};
    },
  } as unknown as EventFeed;
  const hub = new GatewayHub({
    feed,
    gateway: {} as GatewayRepository,
    resumer: {} as Resumer,
    groupsOf: ({ uid }) =>
      new Promise<string[]>((resolve) => {
        reads.push({ uid, answer: resolve });
        readStarted?.();
      }),
    limits: { connectionsPerUser: 10, connectionsPerApp: 10, connectionsPerNode: 10, heartbeatMs: 1_000 },
    log: silentLogger,
  });
  const connection = (uid: string) => {
    const written: string[] = [];
    const conn: GatewayConnection = { id: `${uid}-${Math.random()}`, appId: APP, uid, tokenHash: uid, write: (frame) => written.push(frame), drained: () => undefined, close: () => {} };
    return { conn, written, ids: () => written.filter((frame) => frame.startsWith('{"type":"event"')).map((frame) => JSON.parse(frame).id as string) };
  };
  return {
    hub,
    connection,
    reads,
    /** Resolves once the hub has asked for a read (the n-th). */
    readAsked: (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => (reads.length >= n ? resolve() : undefined);
        readStarted = check;
        check();
      }),
    subscription,
    hand: (...events: RenderedEvent[]) => hand!(events),
  };
}

describe("the hub's index of a connecting user's groups", () => {
  it('applies a membership added while the groups were read (the read did not see it)', async () => {
    const s = setUp();
    const alice = s.connection('alice');
    const attaching = s.hub.attach(alice.conn, undefined, silentLogger);
    await Promise.all([s.readAsked(1), s.subscription]);
    s.hand(added(1, 'g1', 'alice'));
    s.reads[0]!.answer([]);
    await attaching;
    s.hand(message(2, 'g1'));
    assert.deepEqual(alice.ids(), ['2']);
  });

  it('applies a removal and a deletion handed out while the groups were read (the read still had them)', async () => {
    const s = setUp();
    const alice = s.connection('alice');
    const attaching = s.hub.attach(alice.conn, undefined, silentLogger);
    await Promise.all([s.readAsked(1), s.subscription]);
    s.hand(kicked(1, 'g1', 'alice'), deleted(2, 'g2'), added(3, 'g3', 'alice'), kicked(4, 'g3', 'alice'), added(5, 'g3', 'alice'));
    s.reads[0]!.answer(['g1', 'g2', 'g4']);
    await attaching;
    s.hand(message(6, 'g1'), message(7, 'g2'), message(8, 'g3'), message(9, 'g4'));
    assert.deepEqual(alice.ids(), ['8', '9']);
  });

  it('reads the groups of a user whose other connection went while this one was attaching', async () => {
    const s = setUp();
    const first = s.connection('alice');
    const attachingFirst = s.hub.attach(first.conn, undefined, silentLogger);
    await Promise.all([s.readAsked(1), s.subscription]);
    s.reads[0]!.answer(['g1']);
    const releaseFirst = await attachingFirst;
    const second = s.connection('alice');
    // The index has alice: no read, until the first connection goes before the second joins.
    const attachingSecond = s.hub.attach(second.conn, undefined, silentLogger);
    releaseFirst();
    await s.readAsked(2);
    s.reads[1]!.answer(['g1']);
    await attachingSecond;
    s.hand(message(1, 'g1'));
    assert.deepEqual(second.ids(), ['1']);
    assert.deepEqual(first.ids(), []);
  });
});
