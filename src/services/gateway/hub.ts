import type { Logger } from '../../domain/context.js';
import { AppError } from '../../domain/errors.js';
import type { GatewayRepository } from '../../repositories/gateway/gateway.repository.js';
import type { RenderedEvent } from '../event-payloads.js';
import type { EventFeed } from '../event-feed.js';
import { AppConnections, type Attached } from './app-connections.js';
import { audienceOf, membershipChange, type AudienceEvent } from './audience.js';
import { CLOSE, eventFrame, helloFrame, RESUMED, RESYNC_REQUIRED, type GatewayConnection } from './frames.js';
import { PendingGroups } from './pending-groups.js';
import type { Resumer } from './resume.js';

export interface HubLimits {
  connectionsPerUser: number;
  connectionsPerApp: number;
  connectionsPerNode: number;
  heartbeatMs: number;
}

/** One app's state on this node: its connections and its one subscription to the feed. */
interface AppState {
  connections: AppConnections;
  /** Resolves once the app's feed subscription hands events (its start point known). */
  ready: Promise<void>;
  /** The last event id the subscription handed: a connection attached now gets every event after it live. */
  lastHanded: bigint;
  /** Connections being attached or attached (the limits count them). */
  reserved: number;
  reservedByUser: Map<string, number>;
  /** The users whose groups are being read as they connect, with the changes handed out meanwhile. */
  pending: PendingGroups;
  stop: AbortController;
}

/**
 * The gateway of this node (docs/realtime.md): the connections of every app, one feed
 * subscription per app that has any, each event's audience found in the app's index
 * (AppConnections) and its frame written once, resumes handed over to live with no gap and no
 * repeat, and the limits. Transports (the WebSocket route, the SSE fallback) attach connections
 * once authenticated.
 */
export class GatewayHub {
  private readonly apps = new Map<string, AppState>();
  private total = 0;
  private readonly firstListeners: Array<(appId: string, uid: string) => void> = [];
  private readonly lastListeners: Array<(appId: string, uid: string) => void> = [];

  constructor(
    private readonly deps: {
      feed: EventFeed;
      gateway: GatewayRepository;
      resumer: Resumer;
      /** A user's groups (groupsOfUsers; coalesced with other users' connections by the composition root). */
      groupsOf: (user: { appId: string; uid: string }) => Promise<string[]>;
      limits: HubLimits;
      log: Logger;
    },
  ) {}

  /** Calls `listener` when a user gets their first connection on this node. */
  onFirstConnection(listener: (appId: string, uid: string) => void): void {
    this.firstListeners.push(listener);
  }

  /** Calls `listener` when a user's last connection on this node ends. */
  onLastConnection(listener: (appId: string, uid: string) => void): void {
    this.lastListeners.push(listener);
  }

  /** Connections on this node now. */
  get size(): number {
    return this.total;
  }

  /** The app's index of connections on this node, if it has any. */
  connectionsOf(appId: string): AppConnections | undefined {
    return this.apps.get(appId)?.connections;
  }

  /**
   * Attaches an authenticated connection: counted against the limits (else ERR_TOO_MANY_REQUESTS,
   * which the transport closes with 4008), `hello`, then (with `resumeFrom`) every event the user
   * may see after that id, `resumed` (or `resync_required`), then live events. Answers the
   * function that detaches it (once).
   */
  async attach(conn: GatewayConnection, resumeFrom: string | undefined, log: Logger): Promise<() => void> {
    const state = this.stateOf(conn.appId, log);
    const { limits } = this.deps;
    const ofUser = state.reservedByUser.get(conn.uid) ?? 0;
    if (ofUser >= limits.connectionsPerUser || state.reserved >= limits.connectionsPerApp || this.total >= limits.connectionsPerNode) {
      if (state.reserved === 0) this.dropApp(conn.appId, state);
      const which =
        ofUser >= limits.connectionsPerUser
          ? `${limits.connectionsPerUser} per user`
          : state.reserved >= limits.connectionsPerApp
            ? `${limits.connectionsPerApp} per app`
            : `${limits.connectionsPerNode} on this server`;
      throw new AppError('ERR_TOO_MANY_REQUESTS', { message: `Too many connections open at once (at most ${which}).`, retryAfter: 5 });
    }
    state.reserved++;
    state.reservedByUser.set(conn.uid, ofUser + 1);
    this.total++;
    let attached: Attached | undefined;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.total--;
      state.reserved--;
      const left = (state.reservedByUser.get(conn.uid) ?? 1) - 1;
      if (left > 0) state.reservedByUser.set(conn.uid, left);
      else state.reservedByUser.delete(conn.uid);
      if (attached && state.connections.remove(attached)) for (const listener of this.lastListeners) listener(conn.appId, conn.uid);
      if (state.reserved === 0) this.dropApp(conn.appId, state);
    };
    let reading = false;
    try {
      // The user's groups, unless the index has them (another connection of theirs): the changes
      // handed out from before the read until the connection joins the index are kept and
      // applied over it (PendingGroups), so none is missed.
      let groups: string[] = [];
      for (;;) {
        if (!state.connections.has(conn.uid)) {
          reading = true;
          state.pending.begin(conn.uid);
          groups = await this.deps.groupsOf({ appId: conn.appId, uid: conn.uid });
        }
        await state.ready;
        if (released) return release;
        // The user's other connection went meanwhile: their groups are read after all.
        if (reading || state.connections.has(conn.uid)) break;
      }
      // From here to the end of the handover, nothing is awaited between reading lastHanded and
      // holding live frames: every event after it reaches the connection once, live or held.
      attached = { conn, lastId: state.lastHanded, held: resumeFrom === undefined ? undefined : [] };
      if (state.connections.add(attached, reading ? state.pending.settle(conn.uid, groups) : [])) for (const listener of this.firstListeners) listener(conn.appId, conn.uid);
      if (reading) state.pending.end(conn.uid);
      reading = false;
      conn.write(helloFrame(conn.id, limits.heartbeatMs));
      if (resumeFrom !== undefined) await this.resume(attached, BigInt(resumeFrom), () => released);
    } catch (error) {
      release();
      throw error;
    } finally {
      if (reading) state.pending.end(conn.uid);
    }
    return release;
  }

  /** A resume: the catch-up up to the start point, then the frames held meanwhile, then live. */
  private async resume(attached: Attached, after: bigint, gone: () => boolean): Promise<void> {
    const { conn } = attached;
    const upTo = attached.lastId;
    const outcome = after >= upTo ? { complete: true, lastId: after } : await this.deps.resumer.catchUp(conn, after, upTo, gone);
    if (gone()) return;
    conn.write(outcome.complete ? RESUMED : RESYNC_REQUIRED);
    // Live from here: the frames held during the catch-up, after what it sent.
    const from = outcome.complete && outcome.lastId > upTo ? outcome.lastId : upTo;
    const held = attached.held ?? [];
    attached.held = undefined;
    attached.lastId = from;
    for (const frame of held) this.writeTo(attached, frame.id, frame.eventId, frame.frame);
  }

  /** Closes the connections whose tokens are no longer valid (deleted, flushed, the user deactivated or deleted): of the user, or of the whole app. */
  async recheck(appId: string, uid: string | undefined, log: Logger): Promise<void> {
    const connections = this.apps.get(appId)?.connections;
    if (!connections) return;
    const targets: GatewayConnection[] = [];
    const own = uid === undefined ? [...connections.users.values()].flatMap((set) => [...set]) : [...(connections.users.get(uid) ?? [])];
    for (const attached of own) targets.push(attached.conn);
    if (targets.length === 0) return;
    try {
      const valid = await this.deps.gateway.validTokens(appId, [...new Set(targets.map((conn) => conn.tokenHash))]);
      for (const conn of targets) if (!valid.has(conn.tokenHash)) conn.close(CLOSE.revoked, 'token revoked');
    } catch (error) {
      log.warn({ err: error, appId }, 'could not check the gateway connections’ tokens');
    }
  }

  /** Every app with connections on this node. */
  appIds(): string[] {
    return [...this.apps.keys()];
  }

  /** Closes every connection (the shutdown: 1012). */
  closeAll(code: number, reason: string): void {
    for (const state of this.apps.values()) for (const own of state.connections.users.values()) for (const attached of [...own]) attached.conn.close(code, reason);
  }

  private stateOf(appId: string, log: Logger): AppState {
    let state = this.apps.get(appId);
    if (state) return state;
    const stop = new AbortController();
    const created: AppState = { connections: new AppConnections(), ready: Promise.resolve(), lastHanded: 0n, reserved: 0, reservedByUser: new Map(), pending: new PendingGroups(), stop };
    state = created;
    created.ready = (async () => {
      const safe = await this.deps.feed.ready(log);
      created.lastHanded = safe;
      // One subscription per app: its events from the safe id on, each handed to its audience.
      void this.deps.feed.subscribe({ appId, send: (events) => this.handOut(created, events), signal: stop.signal }, String(safe), log).catch((error: unknown) => {
        log.warn({ err: error, appId }, 'the gateway’s feed subscription failed: closing the app’s connections');
        for (const own of created.connections.users.values()) for (const attached of [...own]) attached.conn.close(CLOSE.restarting, 'feed failed');
      });
    })();
    this.apps.set(appId, created);
    return created;
  }

  private dropApp(appId: string, state: AppState): void {
    if (this.apps.get(appId) !== state) return;
    this.apps.delete(appId);
    state.stop.abort();
  }

  /** The events of one advance of the feed for the app: each to its audience, its frame written once. */
  private handOut(state: AppState, events: RenderedEvent[]): void {
    const connections = state.connections;
    for (const event of events) {
      const id = BigInt(event.id);
      const about: AudienceEvent = { trigger: event.trigger, conversationId: event.conversationId, data: event.payload.data };
      const audience = audienceOf(about, connections);
      if (audience.length > 0) {
        const frame = eventFrame(event);
        for (const uid of audience) for (const attached of connections.users.get(uid) ?? []) this.writeTo(attached, id, event.id, frame);
      }
      const change = membershipChange(about);
      if (change) state.pending.note(change);
      if (change?.deleted) connections.dropGroup(change.guid);
      for (const uid of change?.added ?? []) connections.join(change!.guid, uid);
      for (const uid of change?.removed ?? []) connections.leave(change!.guid, uid);
      state.lastHanded = id;
    }
  }

  private writeTo(attached: Attached, id: bigint, eventId: string, frame: string): void {
    if (attached.held) return void attached.held.push({ id, eventId, frame });
    if (id <= attached.lastId) return;
    attached.lastId = id;
    attached.conn.write(frame, eventId);
  }
}

/** The groups of many users (each connecting user's, to index them), one statement per app; each its own answer, in order. */
export function groupsOfUsers(gateway: Pick<GatewayRepository, 'groupsOfMany'>): (users: Array<{ appId: string; uid: string }>) => Promise<string[][]> {
  return async (users) => {
    const byApp = new Map<string, string[]>();
    for (const { appId, uid } of users) {
      const uids = byApp.get(appId);
      if (uids) uids.push(uid);
      else byApp.set(appId, [uid]);
    }
    const found = new Map<string, Map<string, string[]>>();
    for (const [appId, uids] of byApp) found.set(appId, await gateway.groupsOfMany(appId, [...new Set(uids)]));
    return users.map(({ appId, uid }) => found.get(appId)?.get(uid)?.slice() ?? []);
  };
}
