import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { withTransaction } from '../../db/transaction.js';
import type { Logger } from '../../domain/context.js';
import type { EventsRepository } from '../../repositories/events.repository.js';
import type { GatewayRepository } from '../../repositories/gateway/gateway.repository.js';
import type { UsersRepository } from '../../repositories/users.repository.js';
import type { BusMessage, GatewayBus } from './bus.js';
import { presenceFrame } from './frames.js';
import type { GatewayHub } from './hub.js';
import { type OnlineItem, type OnlineOutcome, recordStatus } from './presence-online.js';

export interface PresenceLimits {
  graceMs: number;
  fanout: number;
  lastActiveEveryMs: number;
}

/**
 * Presence (docs/realtime.md, "Presence"): a user is online while one of their connections is,
 * on any node, and offline once none has been for the grace. Each node holds a row per user it
 * serves (gateway_presence) and refreshes them while it lives; a node's rows left unrefreshed
 * (it died) are taken away by the others. A change of status sets users.status and
 * last_active_at, records `user_connection_status_changed` in the event log (webhooks and
 * streams see it), and sends `presence` frames to the user's connected friends and group
 * members, up to `fanout`. lastActiveAt moves at most once per `lastActiveEveryMs` while online.
 */
export class Presence {
  private readonly offlineTimers = new Map<string, NodeJS.Timeout>();
  private readonly online = new Set<string>();
  private ticker: NodeJS.Timeout | undefined;
  /** Stopped (handed over): the connections closing at the shutdown change nothing. */
  private stopped = false;
  /** Work in flight per user, in order (an online and an offline of one user never race). */
  private readonly chains = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      nodeId: string;
      hub: GatewayHub;
      bus: GatewayBus;
      gateway: GatewayRepository;
      users: UsersRepository;
      events: EventsRepository;
      /** Marks a user online on this node (presence-online.ts; coalesced with other users' connections by the composition root). */
      markOnline: (item: OnlineItem) => Promise<OnlineOutcome>;
      /** Up to `limit` of a user's friends (friendsOfUsers; coalesced with other users' by the composition root). */
      friendsOf: (user: { appId: string; uid: string; limit: number }) => Promise<string[]>;
      /** A user's groups (groupsOfUsers: the hub's coalesced read, shared). */
      groupsOf: (user: { appId: string; uid: string }) => Promise<string[]>;
      /** Called after a status change committed (the event log's feeds are woken). */
      committed: () => void;
      limits: PresenceLimits;
      log: Logger;
    },
  ) {
    deps.bus.onMessage((message) => void this.deliver(message));
    deps.hub.onFirstConnection((appId, uid) => this.connected(appId, uid));
    deps.hub.onLastConnection((appId, uid) => this.disconnected(appId, uid));
  }

  /** Refreshes this node's rows, lastActiveAt of its users, and takes away dead nodes' rows, every lastActiveEveryMs. */
  start(): void {
    if (this.ticker) return;
    this.stopped = false;
    this.ticker = setInterval(() => void this.tick(), this.deps.limits.lastActiveEveryMs);
    this.ticker.unref();
  }

  /**
   * Stops (a clean shutdown): this node's users are handed over for the grace, as if each had
   * just lost their last connection. Their rows stay, to be taken as stale by a node's next
   * round once the grace is over (takeStale): a user who reconnects meanwhile, to any node or
   * to this one restarted, stays online with no change recorded; the others go offline then.
   */
  async stop(): Promise<void> {
    clearInterval(this.ticker);
    this.ticker = undefined;
    this.stopped = true;
    for (const [key, timer] of this.offlineTimers) {
      clearTimeout(timer);
      this.offlineTimers.delete(key);
    }
    await Promise.allSettled([...this.chains.values()]);
    this.online.clear();
    try {
      await this.deps.gateway.handOverNode(this.deps.nodeId, this.staleMs, this.deps.limits.graceMs);
    } catch (error) {
      this.deps.log.warn({ err: error }, 'could not hand this node’s presence over');
    }
  }

  /** A node that has not refreshed its rows for this long is gone: three rounds. */
  private get staleMs(): number {
    return this.deps.limits.lastActiveEveryMs * 3;
  }

  private connected(appId: string, uid: string): void {
    if (this.stopped) return;
    const key = `${appId}\u0000${uid}`;
    const timer = this.offlineTimers.get(key);
    if (timer) {
      clearTimeout(timer);
      this.offlineTimers.delete(key);
    }
    if (this.online.has(key)) return;
    this.online.add(key);
    this.queue(key, async () => {
      const changed = await this.deps.markOnline({ appId, uid });
      if (changed !== undefined) this.changed(appId, uid, 'online', changed);
    });
  }

  private disconnected(appId: string, uid: string): void {
    if (this.stopped) return;
    const key = `${appId}\u0000${uid}`;
    if (this.offlineTimers.has(key)) return;
    const timer = setTimeout(() => {
      this.offlineTimers.delete(key);
      this.queue(key, () => this.goOffline(appId, uid));
    }, this.deps.limits.graceMs);
    timer.unref();
    this.offlineTimers.set(key, timer);
  }

  private async goOffline(appId: string, uid: string, nodeId: string | undefined = this.deps.nodeId): Promise<void> {
    // Connected again meanwhile (on this node): still online.
    if (nodeId !== undefined && this.deps.hub.connectionsOf(appId)?.has(uid)) return;
    if (nodeId !== undefined) this.online.delete(`${appId}\u0000${uid}`);
    const changed = await withTransaction(this.deps.db, 'gateway_offline', async (tx) => {
      const outcome = await this.deps.gateway.markOffline(appId, uid, nodeId, tx);
      const row = outcome?.offline ? await this.deps.users.get(appId, uid, tx) : undefined;
      if (row) await recordStatus(this.deps, appId, [row], 'offline', tx);
      return outcome?.offline ? outcome.lastActiveAt : undefined;
    });
    if (changed !== undefined) this.changed(appId, uid, 'offline', changed);
  }

  private changed(appId: string, uid: string, status: 'online' | 'offline', lastActiveAt: Date | null): void {
    this.deps.committed();
    const at = lastActiveAt === null ? undefined : Math.floor(lastActiveAt.getTime() / 1000);
    this.deps.bus.publish(at === undefined ? { k: 'presence', app: appId, uid, status } : { k: 'presence', app: appId, uid, status, at }, this.deps.log);
  }

  private queue(key: string, work: () => Promise<void>): void {
    const next = (this.chains.get(key) ?? Promise.resolve()).then(work).catch((error: unknown) => this.deps.log.warn({ err: error }, 'could not record a presence change'));
    this.chains.set(key, next);
    void next.then(() => {
      if (this.chains.get(key) === next) this.chains.delete(key);
    });
  }

  /** A presence change (this node's or another's): to the user's friends and fellow members connected here, up to the fanout. */
  private async deliver(message: BusMessage): Promise<void> {
    if (message.k !== 'presence') return;
    const connections = this.deps.hub.connectionsOf(message.app);
    if (!connections || this.deps.limits.fanout <= 0) return;
    try {
      const limit = this.deps.limits.fanout;
      // A user connected here: their groups are the index's (kept up to date from the log); else read (coalesced, as their friends).
      const user = { appId: message.app, uid: message.uid };
      const [friends, groups] = await Promise.all([
        this.deps.friendsOf({ appId: message.app, uid: message.uid, limit }),
        connections.has(message.uid) ? [...connections.groupsOf(message.uid)] : this.deps.groupsOf(user),
      ]);
      const targets = new Set<string>();
      for (const uid of friends) if (targets.size < limit && connections.has(uid)) targets.add(uid);
      for (const guid of groups) for (const uid of connections.membersOf(guid)) if (targets.size < limit) targets.add(uid);
      targets.delete(message.uid);
      const frame = presenceFrame(message.uid, message.status, message.at);
      for (const uid of targets) for (const attached of connections.users.get(uid) ?? []) if (!attached.held) attached.conn.write(frame);
    } catch (error) {
      this.deps.log.warn({ err: error }, 'could not send a presence change');
    }
  }

  private async tick(): Promise<void> {
    try {
      await this.deps.gateway.refreshNode(this.deps.nodeId);
      for (const appId of this.deps.hub.appIds()) {
        const connections = this.deps.hub.connectionsOf(appId);
        if (connections) await this.deps.gateway.touchActive(appId, [...connections.users.keys()]);
      }
      // Nodes that have not refreshed for three rounds are gone: their users go offline unless held elsewhere.
      for (const { appId, uid } of await this.deps.gateway.takeStale(this.staleMs, 1_000)) {
        this.queue(`${appId}\u0000${uid}`, () => this.goOffline(appId, uid, undefined));
      }
    } catch (error) {
      this.deps.log.warn({ err: error }, 'the presence refresh failed');
    }
  }
}
