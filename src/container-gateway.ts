import crypto from 'node:crypto';
import type { GatewayConfig } from './config.js';
import type { Database } from './db/database.js';
import type { Logger } from './domain/context.js';
import { EventsRepository } from './repositories/events.repository.js';
import { GATEWAY_CHANNEL, GatewayRepository } from './repositories/gateway/gateway.repository.js';
import { UsersRepository } from './repositories/users.repository.js';
import type { AuthTokensService } from './services/auth-tokens.service.js';
import type { EventFeed } from './services/event-feed.js';
import type { EventPayloads } from './services/event-payloads.js';
import type { EventRetention } from './services/event-retention.js';
import { GatewayBus } from './services/gateway/bus.js';
import { Gateway } from './services/gateway/gateway.js';
import { GatewayHub } from './services/gateway/hub.js';
import { Presence } from './services/gateway/presence.js';
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
    limits: { connectionsPerUser: config.connectionsPerUser, connectionsPerApp: config.connectionsPerApp, connectionsPerNode: config.connectionsPerNode, heartbeatMs: config.heartbeatMs },
    log,
  });
  const typing = new Typing({ hub, bus, gateway: gatewayRows, limits: { throttleMs: config.typingThrottleMs, expiryMs: config.typingExpiryMs, maxGroupSize: config.typingMaxGroupSize }, log });
  const presence = new Presence({
    db: database.db,
    nodeId,
    hub,
    bus,
    gateway: gatewayRows,
    users: new UsersRepository(database.db),
    events: new EventsRepository(database.db),
    committed: deps.committed,
    limits: { graceMs: config.presenceGraceMs, fanout: config.presenceFanout, lastActiveEveryMs: config.lastActiveEveryMs },
    log,
  });
  return new Gateway({
    authTokens: deps.authTokens,
    hub,
    appExists: (appId) => gatewayRows.appExists(appId),
    bus,
    typing,
    presence,
    revocations: deps.revocations,
    tokenRecheckMs: config.tokenRecheckMs,
    log,
  });
}
