import crypto from 'node:crypto';
import { DEFAULT_EVENT_RETENTION_MS, DEFAULT_IMPORT_MAX_RECORDS, DEFAULT_WEBHOOK_TIMEOUT_MS, type Config } from './config.js';
import { DEFAULT_RETRY_SCHEDULE, type RetrySchedule } from './domain/webhooks.js';
import { WebhookDeliveriesRepository } from './repositories/webhook-deliveries.repository.js';
import { WebhookDeliveriesService } from './services/webhook-deliveries.service.js';
import { TableStatistics } from './db/table-statistics.js';
import { DELIVERY_LIMITS, dispatcherLimits, webhookConsumerLimits } from './services/webhook-dispatcher.js';
import { EventDispatcher } from './services/events/dispatcher.js';
import { WebhooksConsumer } from './services/events/webhooks.consumer.js';
import { WebhookSender } from './services/webhook-sender.js';
import { PARLEY_VERSION } from './version.js';
import type { Database } from './db/database.js';
import type { Logger } from './domain/context.js';
import { DEFAULT_RATE_LIMITS } from './domain/rate-limits.js';
import { PasswordHasher } from './domain/passwords.js';
import { ApiKeysRepository } from './repositories/api-keys.repository.js';
import { AppsRepository } from './repositories/apps.repository.js';
import { authTokenCache, AuthTokensRepository } from './repositories/auth-tokens.repository.js';
import { BlockedUsersRepository } from './repositories/blocked-users.repository.js';
import { ConversationStatesRepository } from './repositories/conversation-states.repository.js';
import { EVENT_CHANNEL, EventsRepository } from './repositories/events.repository.js';
import { EventRetention } from './services/event-retention.js';
import { EventFeed } from './services/event-feed.js';
import { EventSignals } from './services/event-signals.js';
import { EventPayloads } from './services/event-payloads.js';
import { ConversationsRepository } from './repositories/message-store/conversations.repository.js';
import { CredentialCache } from './repositories/credential-cache.js';
import { FriendsRepository } from './repositories/friends.repository.js';
import { GroupMembersRepository } from './repositories/group-members.repository.js';
import { GroupsRepository } from './repositories/groups.repository.js';
import { MessageBatchesRepository } from './repositories/message-store/message-batches.repository.js';
import { MessageImportsRepository } from './repositories/message-store/message-imports.repository.js';
import { MessageTextsRepository } from './repositories/message-store/message-texts.repository.js';
import { MessagePagesRepository } from './repositories/message-pages.repository.js';
import { MessageStoreRepository } from './repositories/message-store/message-store.repository.js';
import { MessagesRepository } from './repositories/messages.repository.js';
import { ReactionsRepository } from './repositories/reactions.repository.js';
import { PermissionsRepository } from './repositories/permissions.repository.js';
import { MemoryRateLimitCounters } from './repositories/rate-limit-counters.js';
import { RolesRepository } from './repositories/roles.repository.js';
import { UserPurgeRepository } from './repositories/user-purge.repository.js';
import { UsersRepository } from './repositories/users.repository.js';
import { ActionMessages } from './services/action-messages.js';
import { ApiKeysService } from './services/api-keys.service.js';
import { AppsService } from './services/apps.service.js';
import { AuthTokensService } from './services/auth-tokens.service.js';
import { ClientSessionsService } from './services/client-sessions.service.js';
import { BlockedUsersService } from './services/blocked-users.service.js';
import { DataImportService } from './services/data-import.service.js';
import { ImportedEntities } from './services/imported-entities.js';
import { MessageImportService } from './services/message-import.service.js';
import { ConversationsService } from './services/conversations.service.js';
import { FriendsService } from './services/friends.service.js';
import { GroupMembersService } from './services/group-members.service.js';
import { GroupsService } from './services/groups.service.js';
import { MessageTextBackfill } from './services/message-text-backfill.js';
import { MessageHistoryService } from './services/message-history.service.js';
import { MessagesService } from './services/messages.service.js';
import { MessageEditsService } from './services/message-edits.service.js';
import { ReactionsService } from './services/reactions.service.js';
import { RateLimitsService } from './services/rate-limits.service.js';
import { RbacService } from './services/rbac.service.js';
import { RolesService } from './services/roles.service.js';
import { ThreadsService } from './services/threads.service.js';
import { UsersService } from './services/users.service.js';
import { AppSettingsRepository } from './repositories/app-settings.repository.js';
import { ManagementAppsRepository } from './repositories/management-apps.repository.js';
import { ManagementKeysRepository } from './repositories/management-keys.repository.js';
import { WebhooksRepository } from './repositories/webhooks.repository.js';
import { ManagementService } from './services/management.service.js';
import { WebhooksService } from './services/webhooks.service.js';
import { HeldMessagesRepository } from './repositories/message-store/held-messages.repository.js';
import { BlockedMessagesRepository } from './repositories/moderation/blocked-messages.repository.js';
import { createModeration } from './container-moderation.js';
import { createNotifications, type NotificationEndpoints } from './container-notifications.js';
import { createCoalescing, type RateLimitOptions } from './container-shared.js';
import { measuredConsumer, observeParts } from './container-metrics.js';
import { PAGE_CACHE_BYTES, RenderedPages } from './http/rendered-pages.js';
import type { Metrics } from './metrics/registry.js';
import { createStats } from './container-stats.js';
import { SecretBox } from './domain/secret-box.js';
import { Revocations } from './services/gateway/revocations.js';

/** Composes database → repositories → services. Each service gets only what it uses. */
export function createServices(
  database: Database,
  config: Pick<Config, 'region'>,
  options: {
    webhookAllowPrivate?: boolean;
    webhookTimeoutMs?: number;
    webhookRetry?: RetrySchedule;
    credentialCacheTtlMs?: number;
    importMaxRecords?: number;
    rateLimits?: RateLimitOptions;
    eventRetentionMs?: number;
    /** The event feed's polling (tests of its wake-ups): every pollMs while the log moves, idlePollMs once still. */
    eventFeedPace?: { pollMs: number; idlePollMs: number };
    /** The key provider secrets are sealed with (see loadSecretKey); tests and tools get one of their own. */
    secretKey?: Buffer;
    /** Where the notification providers are (tests' local fakes). */
    notificationEndpoints?: NotificationEndpoints;
    /** The process's metrics (docs/metrics.md), when they are on: the parts' stats are registered there. */
    metrics?: Metrics;
  } = {},
) {
  const db = database.db;
  const credentials = new CredentialCache(options.credentialCacheTtlMs ?? 5_000);
  // Users' auth tokens (docs/client-api.md), as keys: 5 s, forgotten here when deleted or their user gone.
  const tokenOwners = authTokenCache(options.credentialCacheTtlMs ?? 5_000);
  // scrypt runs on libuv's thread pool (4 threads): half of it at most, requests' own hashes first.
  const passwords = new PasswordHasher(2);
  const repositories = {
    apps: new AppsRepository(db, credentials),
    apiKeys: new ApiKeysRepository(db, credentials),
    users: new UsersRepository(db, (rows) => database.noteBulkWrite(rows), tokenOwners),
    authTokens: new AuthTokensRepository(db, tokenOwners),
    groups: new GroupsRepository(db),
    groupMembers: new GroupMembersRepository(db),
    roles: new RolesRepository(db),
    permissions: new PermissionsRepository(db),
    friends: new FriendsRepository(db),
    blockedUsers: new BlockedUsersRepository(db),
    messages: new MessagesRepository(db),
    // History pages and their versions (the version checks coalesced: see MessagePagesRepository).
    messagePages: new MessagePagesRepository(db),
    messageStore: new MessageStoreRepository(db), // messages stored one statement at a time (replies, action messages)
    messageBatches: new MessageBatchesRepository(db), // coalesced sends
    messageImports: new MessageImportsRepository(db), // the data import's messages
    messageTexts: new MessageTextsRepository(db),
    conversations: new ConversationsRepository(),
    conversationStates: new ConversationStatesRepository(db),
    reactions: new ReactionsRepository(db),
    userPurge: new UserPurgeRepository(),
    events: new EventsRepository(db), // the event log (docs/events.md): events of changes other than stored messages
    // Moderation (docs/moderation.md): messages held for review, kept out of their conversations, and what held them.
    heldMessages: new HeldMessagesRepository(db),
    blockedMessages: new BlockedMessagesRepository(db),
  };
  const coalescing = createCoalescing(repositories, database.engine);
  const apiKeys = new ApiKeysService({ db, apiKeys: repositories.apiKeys, apps: repositories.apps });
  const deploymentLimits = options.rateLimits?.limits ?? DEFAULT_RATE_LIMITS;
  const apps = new AppsService({ db, apps: repositories.apps, apiKeys, roles: repositories.roles, region: config.region, rateLimits: deploymentLimits });
  // The management API (docs/management-api.md): the deployment's credentials, its apps, their settings and webhooks.
  const managementApps = new ManagementAppsRepository(db, credentials);
  const management = new ManagementService({
    db,
    keys: new ManagementKeysRepository(db),
    apps: managementApps,
    settings: new AppSettingsRepository(db),
    appsService: apps,
    region: config.region,
    settleMs: options.credentialCacheTtlMs ?? 5_000,
    noteBulkWrite: (rows) => database.noteBulkWrite(rows),
  });
  const webhookRows = new WebhooksRepository(db);
  // The webhooks' part of the event log's queue: its log read by requests, its queue moved by
  // the dispatcher on the consumers' connections.
  const webhookDeliveries = new WebhookDeliveriesRepository(db);
  const webhookQueue = new WebhookDeliveriesRepository(database.consumerDb);
  const webhooks = new WebhooksService({
    db,
    webhooks: webhookRows,
    deliveries: webhookDeliveries,
    apps: managementApps,
    region: config.region,
    allowPrivate: options.webhookAllowPrivate ?? false,
  });
  const webhookDeliveriesService = new WebhookDeliveriesService({ webhooks, deliveries: webhookDeliveries });
  const revocations = new Revocations(); // tokens taken away, users deactivated or deleted: the gateway closes their sockets (docs/realtime.md)
  const authTokens = new AuthTokensService({ db, authTokens: repositories.authTokens, users: repositories.users, revocations });
  const users = new UsersService({
    db,
    users: repositories.users,
    createUser: coalescing.createUser,
    activeUser: coalescing.activeUser,
    blocks: repositories.blockedUsers,
    authTokens,
    roles: repositories.roles,
    purge: repositories.userPurge,
    revocations,
  });
  const rateLimits = new RateLimitsService({
    counters: options.rateLimits?.counters ?? new MemoryRateLimitCounters(),
    limits: deploymentLimits,
    now: options.rateLimits?.now ?? Date.now,
    authFailures: options.rateLimits?.authFailures,
  });
  const roles = new RolesService({ db, roles: repositories.roles });
  const rbac = new RbacService({ db, roles: repositories.roles, groups: repositories.groups, permissions: repositories.permissions });
  const groupDeps = { db, groups: repositories.groups, members: repositories.groupMembers, users: repositories.users, usersService: users, rbac, passwords };
  const socialDeps = { db, blocks: repositories.blockedUsers, users: repositories.users, usersService: users };
  const friends = new FriendsService({ ...socialDeps, friends: repositories.friends });
  const blockedUsers = new BlockedUsersService({ ...socialDeps, events: repositories.events });
  const history = new MessageHistoryService({
    messages: repositories.messages,
    readPage: coalescing.readPage,
    pageVersion: coalescing.pageVersion,
    users: repositories.users,
    groups: repositories.groups,
    members: repositories.groupMembers,
    reactions: repositories.reactions,
    states: repositories.conversationStates,
    usersService: users,
  });
  // Moderation (docs/moderation.md): rules, lists and the hook, each app's compiled set-up, the
  // seam every message passes before it is stored, and moderators' reviews.
  const moderation = createModeration(database, { repositories, history, users, allowPrivate: options.webhookAllowPrivate ?? false });
  const { moderator } = moderation;
  const messages = new MessagesService({
    db,
    moderator,
    held: repositories.heldMessages,
    messages: repositories.messages,
    store: repositories.messageStore,
    send: coalescing.send,
    users: repositories.users,
    usersService: users,
    history,
  });
  // Action messages enter conversations through MessagesService: built after it, before the services that record them.
  const actions = new ActionMessages({ messages, users: repositories.users, groups: repositories.groups, events: repositories.events });
  const groupMembers = new GroupMembersService({ ...groupDeps, actions });
  const groups = new GroupsService({ ...groupDeps, membersService: groupMembers, events: repositories.events });
  const messageEdits = new MessageEditsService({
    db,
    messages: repositories.messages,
    conversations: repositories.conversations,
    groups: repositories.groups,
    members: repositories.groupMembers,
    usersService: users,
    messagesService: messages,
    history,
    actions,
    rbac,
    moderator,
    holds: moderation.holds,
    events: repositories.events,
  });
  const threads = new ThreadsService({ messages: repositories.messages, messagesService: messages, history });
  const reactions = new ReactionsService({
    db,
    messages: repositories.messages,
    reactions: repositories.reactions,
    users: repositories.users,
    history,
    usersService: users,
    rbac,
    events: repositories.events,
  });
  const conversations = new ConversationsService({
    db,
    states: repositories.conversationStates,
    messages: repositories.messages,
    users: repositories.users,
    groups: repositories.groups,
    blocked: repositories.blockedUsers,
    usersService: users,
    history,
    events: repositories.events,
  });
  // Notifications (docs/notifications.md): providers, users' preferences and tokens, the log.
  const notifications = createNotifications(database, {
    secrets: new SecretBox(options.secretKey ?? crypto.randomBytes(32)),
    users,
    allowPrivate: options.webhookAllowPrivate ?? false,
    retry: options.webhookRetry ?? DEFAULT_RETRY_SCHEDULE,
    ...(options.notificationEndpoints ? { endpoints: options.notificationEndpoints } : {}),
  });
  const noteBulkWrite = (rows: number) => database.noteBulkWrite(rows);
  const maxRecords = options.importMaxRecords ?? DEFAULT_IMPORT_MAX_RECORDS;
  const entities = new ImportedEntities({
    db,
    users: repositories.users,
    groups: repositories.groups,
    members: repositories.groupMembers,
    roles: repositories.roles,
    noteBulkWrite,
    passwords,
  });
  const dataImport = new DataImportService({ db, users: repositories.users, groups: repositories.groups, members: repositories.groupMembers, noteBulkWrite, maxRecords, entities });
  const messageImport = new MessageImportService({
    db,
    users: repositories.users,
    messageImports: repositories.messageImports,
    history,
    noteBulkWrite,
    maxRecords,
    entities,
    moderator,
  });
  // The event log's readers: payloads as webhooks and the stream send them, and the feed of the
  // log to this process's live streams and webhook delivery (polled every 25 ms while the log moves,
  // every 200 ms once it has been still for a second, and at once when woken: by this process's
  // answered writes, and on PostgreSQL by other processes' NOTIFY, at most one each per 100 ms).
  const consumerDb = database.consumerDb;
  const eventPayloads = new EventPayloads({ db: consumerDb, messages: repositories.messages, history, region: config.region });
  const listen = database.listen;
  const eventFeed = new EventFeed({
    // The feed reads the log on the consumers' connections.
    events: new EventsRepository(consumerDb),
    payloads: eventPayloads,
    pollMs: options.eventFeedPace?.pollMs ?? 25,
    idlePollMs: options.eventFeedPace?.idlePollMs ?? 200,
    ...(listen ? { listen: (wake: () => void, log: Logger) => listen(EVENT_CHANNEL, wake, log) } : {}),
  });
  const eventSignals = new EventSignals({
    feed: eventFeed,
    ...(database.engine === 'postgres' ? { notify: () => repositories.events.signal() } : {}),
    notifyEveryMs: 100,
  });
  // The event log's cleanup (the server runs it every minute).
  // Stored texts for messages stored without one (parley messages backfill-texts).
  const messageTextBackfill = new MessageTextBackfill({ db, texts: repositories.messageTexts });
  const eventRetention = new EventRetention({
    events: repositories.events,
    deliveries: webhookDeliveries,
    logs: notifications.retained,
    retentionMs: options.eventRetentionMs ?? DEFAULT_EVENT_RETENTION_MS,
  });
  // The event log's consumers (docs/events.md, "Consumers"), delivered by one dispatcher on the
  // consumers' own connections: the webhooks (docs/webhooks.md) and notifications
  // (docs/notifications.md). 1,024 lanes at once per
  // process; per webhook 128, or 512 while its endpoint answers quickly: a slow endpoint holds
  // only its smaller share. Claims name a lock held on a session of this process's own, so a
  // process that dies has its lanes taken over within a second or two.
  const webhooksConsumer = new WebhooksConsumer({
    deliveries: webhookQueue,
    webhooks: new WebhooksRepository(consumerDb),
    sender: new WebhookSender({
      timeoutMs: options.webhookTimeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
      allowPrivate: options.webhookAllowPrivate ?? false,
      userAgent: `Parley-Webhooks/${PARLEY_VERSION}`,
      connectionsPerHost: DELIVERY_LIMITS.lanesPerWebhook,
    }),
    retry: options.webhookRetry ?? DEFAULT_RETRY_SCHEDULE,
    timeoutMs: options.webhookTimeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
    limits: webhookConsumerLimits(DELIVERY_LIMITS),
  });
  // Usage statistics (docs/stats.md): counted off the event log, read by the Metrics routes.
  const stats = createStats(database, { feed: eventFeed, feedPollMs: dispatcherLimits(DELIVERY_LIMITS).feedPollMs });
  const eventDispatcher = new EventDispatcher({
    db: consumerDb,
    holdLock: (key, log) => database.holdLock(key, log),
    feed: eventFeed,
    payloads: eventPayloads,
    consumers: [webhooksConsumer, notifications.consumer].map((consumer) => (options.metrics ? measuredConsumer(consumer, options.metrics) : consumer)),
    limits: dispatcherLimits(DELIVERY_LIMITS),
    // The queue's tables analysed after its first 1,000 deliveries, then about each time they
    // double: their statements' plans need statistics, which autovacuum may not give in time.
    statistics: new TableStatistics({ analyze: () => webhookQueue.analyze(), firstAfter: 1_000, what: 'ANALYZE of the event queue' }),
  });
  // The history pages this node answered, sent again while unchanged (see RenderedPages).
  const pageCache = new RenderedPages(PAGE_CACHE_BYTES, (ctx, check) => history.pageVersion(ctx, check));
  const imports = [dataImport.records, messageImport.records];
  if (options.metrics) observeParts(options.metrics, { database, batchers: coalescing, credentials, tokenOwners, pageCache, eventFeed, eventDispatcher, consumerDb, rateLimits, imports });
  return {
    pageCache,
    eventRetention,
    messageTextBackfill,
    eventPayloads,
    eventFeed,
    eventSignals,
    eventDispatcher,
    revocations,
    /** The event dispatcher, by the name it had while webhooks were its one consumer. */ webhookDispatcher: eventDispatcher,
    apps,
    management,
    webhooks,
    webhookDeliveries: webhookDeliveriesService,
    rateLimits,
    apiKeys,
    authTokens,
    clientSessions: new ClientSessionsService({ users, authTokens, region: config.region, version: PARLEY_VERSION }),
    users,
    groups,
    groupMembers,
    friends,
    blockedUsers,
    roles,
    rbac,
    messages,
    history,
    threads,
    reactions,
    messageEdits,
    conversations,
    dataImport,
    messageImport,
    moderationSetups: moderation.setups,
    moderationLifecycle: moderation.lifecycle,
    ...moderation.services,
    ...notifications.services,
    notificationRetained: notifications.retained,
    stats: stats.stats,
    statsAggregator: stats.statsAggregator,
  };
}

export type Services = ReturnType<typeof createServices>;
