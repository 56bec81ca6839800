import crypto from 'node:crypto';
import type { GatewayConfig } from './config.js';
import { coalesced } from './db/batcher.js';
import type { Database } from './db/database.js';
import type { Logger } from './domain/context.js';
import { EventsRepository } from './repositories/events.repository.js';
import { GATEWAY_CHANNEL, GatewayRepository } from './repositories/gateway/gateway.repository.js';
import { UsersRepository } from './repositories/users.repository.js';
import type { AppsService } from './services/apps.service.js';
import type { AuthTokensService } from './services/auth-tokens.service.js';
import type { EventFeed } from './services/event-feed.js';
import type { EventPayloads } from './services/event-payloads.js';
import type { EventRetention } from './services/event-retention.js';
import { GatewayBus } from './services/gateway/bus.js';
import { Gateway } from './services/gateway/gateway.js';
import { GatewayHub, groupsOfUsers } from './services/gateway/hub.js';
import { Presence } from './services/gateway/presence.js';
import { friendsOfUsers, markOnlineMany } from './services/gateway/presence-online.js';
import { Resumer } from './services/gateway/resume.js';
import type { Revocations } from './services/gateway/revocations.js';
import { Typing } from './services/gateway/typing.js';

/**
 * The WebSocket gateway and its SSE fallback (docs/realtime.md): the hub of this node's
 * connections over the event feed (one subscription per app with connections), resumes read by
 * the user's conversations, typing and presence, and the bus between nodes: on PostgreSQL a
 * NOTIFY channel of its own (parley_gateway), ten messages' worth gathered for 10 ms, at most 50
 * NOTIFYs a second per node; on the embedded database this process alone.
 */
export function createGateway(
  database: Database,
  deps: {
    config: GatewayConfig;
    feed: EventFeed;
    payloads: EventPayloads;
    authTokens: AuthTokensService;
    /** The apps (a connection's app is checked as a REST request's is, through the credential cache). */
    apps: Pick<AppsService, 'requireServed'>;
    revocations: Revocations;
    retentionMs: number;
    /** The event log's retention: it deletes deleted groups' members (for resumes) as old as the events. */
    retention: Pick<EventRetention, 'retain'>;
    /** A status change committed events: the feeds look at the log now. */
    committed: () => void;
    log: Logger;
  },
) {
  const { config, log } = deps;
  const nodeId = crypto.randomUUID();
  const gatewayRows = new GatewayRepository(database.db);
  const listen = database.listen;
  deps.retention.retain({
    apps: () => gatewayRows.appsWithDeletedGroupMembers(),
    deleteBefore: (appId, cutoff, batch) => gatewayRows.deleteDeletedGroupMembersBefore(appId, cutoff, batch),
  });
  // The groups of users connecting at once (and of those whose presence changed), read together: one statement a batch.
  const groupsOf = coalesced(groupsOfUsers(gatewayRows), { maxBatch: 500, maxInFlight: 2 });
  const bus = new GatewayBus({
    nodeId,
    ...(database.engine === 'postgres'
      ? { notify: (payload: string) => gatewayRows.signal(payload), ...(listen ? { listen: (onPayload: (payload?: string) => void, l: Logger) => listen(GATEWAY_CHANNEL, onPayload, l) } : {}) }
      : {}),
    gatherMs: 10,
    maxNotifiesPerSecond: 50,
  });
  const resumer = new Resumer({ gateway: gatewayRows, payloads: deps.payloads, maxEvents: config.resumeMaxEvents, retentionMs: deps.retentionMs });
  const hub = new GatewayHub({
    feed: deps.feed,
    gateway: gatewayRows,
    resumer,
    groupsOf,
    limits: { connectionsPerUser: config.connectionsPerUser, connectionsPerApp: config.connectionsPerApp, connectionsPerNode: config.connectionsPerNode, heartbeatMs: config.heartbeatMs },
    log,
  });
  const typing = new Typing({ hub, bus, gateway: gatewayRows, limits: { throttleMs: config.typingThrottleMs, expiryMs: config.typingExpiryMs, maxGroupSize: config.typingMaxGroupSize }, log });
  const users = new UsersRepository(database.db);
  const events = new EventsRepository(database.db);
  const presence = new Presence({
    db: database.db,
    nodeId,
    hub,
    bus,
    gateway: gatewayRows,
    users,
    events,
    // Users connecting at once (a reconnect storm) are marked online together: one transaction a batch.
    markOnline: coalesced(markOnlineMany({ db: database.db, gateway: gatewayRows, users, events }, nodeId), { maxBatch: 500, maxInFlight: 2 }),
    friendsOf: coalesced(friendsOfUsers(gatewayRows), { maxBatch: 500, maxInFlight: 2 }),
    groupsOf,
    committed: deps.committed,
    limits: { graceMs: config.presenceGraceMs, fanout: config.presenceFanout, lastActiveEveryMs: config.lastActiveEveryMs },
    log,
  });
  return new Gateway({
    authTokens: deps.authTokens,
    hub,
    requireApp: (appId) => deps.apps.requireServed(appId),
    bus,
    typing,
    presence,
    revocations: deps.revocations,
    tokenRecheckMs: config.tokenRecheckMs,
    log,
  });
}
