import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import type { EventsRepository } from '../../repositories/events.repository.js';
import type { GatewayRepository } from '../../repositories/gateway/gateway.repository.js';
import type { UserRow, UsersRepository } from '../../repositories/users.repository.js';
import { toUser } from '../views/users.view.js';

/** A user who got their first connection on this node. */
export interface OnlineItem {
  appId: string;
  uid: string;
}

/** What marking a user online changed: their lastActiveAt when they were offline before (a change recorded), else undefined. */
export type OnlineOutcome = Date | undefined;

/** The stores a status change writes to. */
export interface StatusStores {
  db: Kysely<DB>;
  gateway: GatewayRepository;
  users: UsersRepository;
  events: EventsRepository;
}

/**
 * Marks many users online on node `nodeId` in one transaction (the composition root coalesces
 * concurrent connections into such batches: container-gateway.ts): their presence rows, the
 * status of those who were offline, and a `user_connection_status_changed` event for each of
 * these. Each item gets its own answer, in order.
 */
export function markOnlineMany(stores: StatusStores, nodeId: string): (items: OnlineItem[]) => Promise<OnlineOutcome[]> {
  return (items) =>
    withTransaction(stores.db, 'gateway_online', async (tx) => {
      const byApp = new Map<string, string[]>();
      for (const { appId, uid } of items) {
        const uids = byApp.get(appId) ?? [];
        if (uids.length === 0) byApp.set(appId, uids);
        uids.push(uid);
      }
      const changed = new Map<string, Date>();
      for (const [appId, uids] of byApp) {
        const outcomes = await stores.gateway.markOnline(appId, [...new Set(uids)], nodeId, tx);
        const wentOnline = [...outcomes].filter(([, outcome]) => outcome.wasOffline);
        if (wentOnline.length === 0) continue;
        const rows = await stores.users.getMany(
          appId,
          wentOnline.map(([uid]) => uid),
          tx,
        );
        await recordStatus(stores, appId, rows, 'online', tx);
        for (const [uid, outcome] of wentOnline) if (outcome.lastActiveAt !== null) changed.set(`${appId}\u0000${uid}`, outcome.lastActiveAt);
      }
      // A user named twice in one batch changed once: the first item says so.
      return items.map(({ appId, uid }) => {
        const key = `${appId}\u0000${uid}`;
        const at = changed.get(key);
        changed.delete(key);
        return at;
      });
    });
}

/** Records a `user_connection_status_changed` event for each of the users (webhooks and streams see them). */
export async function recordStatus(stores: Pick<StatusStores, 'events'>, appId: string, rows: readonly UserRow[], status: 'online' | 'offline', tx: Tx): Promise<void> {
  const now = Date.now();
  const events = rows.map((row) => ({
    trigger: 'user_connection_status_changed' as const,
    data: {
      timestamp: now,
      user: toUser(row, { withTags: false }),
      status,
      currentConnection: { action: status === 'online' ? 'connected' : 'disconnected', platform: 'websocket', connectedAt: Math.floor(now / 1000) },
      userPresenceChanged: true,
    },
  }));
  await stores.events.record(appId, events, tx);
}

/** Up to `limit` friends of many users (each whose presence changed), one statement per app and limit; each its own answer, in order. */
export function friendsOfUsers(gateway: Pick<GatewayRepository, 'friendsOfMany'>): (users: Array<{ appId: string; uid: string; limit: number }>) => Promise<string[][]> {
  return async (users) => {
    const groups = new Map<string, { appId: string; limit: number; uids: Set<string> }>();
    for (const { appId, uid, limit } of users) {
      const key = `${appId}\u0000${limit}`;
      const group = groups.get(key);
      if (group) group.uids.add(uid);
      else groups.set(key, { appId, limit, uids: new Set([uid]) });
    }
    const found = new Map<string, Map<string, string[]>>();
    for (const [key, { appId, limit, uids }] of groups) found.set(key, await gateway.friendsOfMany(appId, [...uids], limit));
    return users.map(({ appId, uid, limit }) => found.get(`${appId}\u0000${limit}`)?.get(uid)?.slice() ?? []);
  };
}
