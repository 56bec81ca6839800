import type { GatewayRepository } from '../../repositories/gateway/gateway.repository.js';
import type { EventPayloads } from '../event-payloads.js';
import { audienceOf, membershipChange, type AudienceEvent, type AudienceView } from './audience.js';
import { eventFrame, type GatewayConnection } from './frames.js';

/** Events read (and rendered) at a time by a catch-up. */
const PAGE = 200;
/** A log whose oldest event is younger than the retention less this has lost nothing to it yet. */
const RETENTION_MARGIN_MS = 3_600_000;

/**
 * A resume's catch-up (docs/realtime.md, "Resume"): the events after the client's last id that
 * the user may see, read by their conversations (GatewayRepository.userEventsAfter, never the
 * whole app's log), decided by the audience rule, rendered and sent a page at a time as the
 * connection takes them. Beyond `maxEvents`, or from before what the retention kept, the client
 * must resync instead.
 *
 * The groups read are the user's: theirs now, those they left or were removed from within the
 * range, those deleted within it while they were a member. The rule sees the user as a member
 * of each until the replay passes their removal or the group's deletion (both shown: the user
 * is named, or a member), and again from a later join: what a connection held through the
 * range would have been sent.
 */
export class Resumer {
  constructor(
    private readonly deps: {
      gateway: GatewayRepository;
      payloads: EventPayloads;
      maxEvents: number;
      retentionMs: number;
      now?: () => number;
    },
  ) {}

  /**
   * Sends the events the user may see in (after, upTo], in order. Answers whether it sent all of
   * them (`complete`; else the client must resync) and the last id it covered.
   */
  async catchUp(conn: GatewayConnection, after: bigint, upTo: bigint, gone: () => boolean): Promise<{ complete: boolean; lastId: bigint }> {
    const { gateway, payloads } = this.deps;
    const first = await gateway.firstEvent(conn.appId);
    const now = this.deps.now?.() ?? Date.now();
    if (first && after < BigInt(first.id) - 1n && first.createdAt.getTime() < now - this.deps.retentionMs + RETENTION_MARGIN_MS) return { complete: false, lastId: after };
    const uid = conn.uid;
    // The groups the replay has passed the user's removal from, or the deletion of.
    const left = new Set<string>();
    const view: AudienceView = { has: (user) => user === uid, membersOf: (guid) => (left.has(guid) ? [] : [uid]) };
    const shown = (event: AudienceEvent) => {
      const visible = audienceOf(event, view).length > 0;
      const change = membershipChange(event);
      if (change?.deleted || change?.removed?.includes(uid)) left.add(change.guid);
      else if (change?.added?.includes(uid)) left.delete(change.guid);
      return visible;
    };
    let cursor = after;
    let sent = 0;
    for (;;) {
      if (gone()) return { complete: false, lastId: cursor };
      const rows = await gateway.userEventsAfter(conn.appId, uid, String(cursor), String(upTo), PAGE);
      const kept = rows.filter((row) => shown({ trigger: row.trigger, conversationId: row.conversation_id, data: row.data }));
      sent += kept.length;
      if (sent > this.deps.maxEvents) return { complete: false, lastId: cursor };
      if (kept.length > 0) {
        const events = await payloads.render(kept);
        if (gone()) return { complete: false, lastId: cursor };
        // Each event as the connection takes it: a page written at once could overrun a reader's bound.
        for (const event of events) {
          conn.write(eventFrame(event), event.id);
          const taken = conn.drained();
          if (taken) await taken;
        }
        if (gone()) return { complete: false, lastId: cursor };
      }
      if (rows.length < PAGE) return { complete: true, lastId: upTo };
      cursor = BigInt(rows[rows.length - 1]!.id);
    }
  }
}
