import type { ColumnType, Generated } from 'kysely';
import type {
  ModerationRulesTable,
  ModerationRuleRevisionsTable,
  ModerationKeywordListsTable,
  ModerationDeletedDefaultsTable,
  ModerationVersionsTable,
  ModerationHooksTable,
  ModerationBlockedMessagesTable,
  ModerationReasonsTable,
  ModerationFlaggedMessagesTable,
  ModerationFlagsTable,
} from './moderation-tables.js';
export type { EventCursorsTable, EventDeliveriesTable, EventLanesTable, EventDeliveryAttemptsTable } from './event-consumer-tables.js';
export type {
  ModerationRulesTable,
  ModerationRuleRevisionsTable,
  ModerationKeywordListsTable,
  ModerationDeletedDefaultsTable,
  ModerationVersionsTable,
  ModerationHooksTable,
  ModerationBlockedMessagesTable,
  ModerationReasonsTable,
  ModerationFlaggedMessagesTable,
  ModerationFlagsTable,
} from './moderation-tables.js';

/** A timestamp column: read as Date, written as Date (or left to its default). */
type Timestamp = ColumnType<Date, Date | undefined, Date>;
type NullableTimestamp = ColumnType<Date | null, Date | null | undefined, Date | null>;
/** json columns: parsed on read, written as a JSON string so key order is kept. */
type Json = ColumnType<unknown, string | null | undefined, string | null>;

export interface AppsTable {
  id: string;
  name: string;
  region: string;
  created_at: Generated<Date>;
}

export interface ApiKeysTable {
  app_id: string;
  key_hash: string;
  /** Shown in listings instead of the key: first 8 and last 4 characters. */
  key_hint: string;
  name: string;
  scope: 'fullAccess' | 'authOnly';
  created_at: Generated<Date>;
  updated_at: NullableTimestamp;
}

/** An app's own rate limits, per minute; NULL: the deployment's (migration 0011). */
export interface AppRateLimitsTable {
  app_id: string;
  core: number | null;
  standard: number | null;
  import: number | null;
  send_per_user: number | null;
  unread_per_user: number | null;
  updated_at: Timestamp;
}

export interface UsersTable {
  app_id: string;
  uid: string;
  name: string;
  avatar: string | null;
  link: string | null;
  role: string;
  status_message: string | null;
  metadata: Json;
  tags: ColumnType<string[], string[] | undefined, string[]>;
  status: Generated<string>;
  created_at: Timestamp;
  updated_at: NullableTimestamp;
  last_active_at: NullableTimestamp;
  deactivated_at: NullableTimestamp;
}

export interface UserCountsTable {
  app_id: string;
  shard: number;
  active: string;
  deactivated: string;
}

export interface AuthTokensTable {
  app_id: string;
  uid: string;
  token_hash: string;
  token_hint: string;
  platform: string | null;
  user_agent: string | null;
  app_info: Json;
  created_at: Generated<Date>;
  updated_at: NullableTimestamp;
}

export type GroupType = 'public' | 'private' | 'password';
export type MemberScope = 'admin' | 'moderator' | 'participant';

export interface GroupsTable {
  app_id: string;
  guid: string;
  name: string;
  type: GroupType;
  password_hash: string | null;
  icon: string | null;
  description: string | null;
  metadata: Json;
  tags: ColumnType<string[], string[] | undefined, string[]>;
  owner: string | null;
  members_count: Generated<number>;
  created_at: Timestamp;
  updated_at: NullableTimestamp;
}

export interface GroupMembersTable {
  app_id: string;
  guid: string;
  uid: string;
  scope: MemberScope;
  joined_at: Timestamp;
}

export interface GroupBansTable {
  app_id: string;
  guid: string;
  uid: string;
  banned_at: Timestamp;
  banned_by: string | null;
}

/** One row per direction of a friendship. */
export interface FriendsTable {
  app_id: string;
  uid: string;
  friend_uid: string;
  created_at: Timestamp;
}

/** `uid` has blocked `blocked_uid`. */
export interface BlockedUsersTable {
  app_id: string;
  uid: string;
  blocked_uid: string;
  blocked_at: Timestamp;
}

export interface RolesTable {
  app_id: string;
  role: string;
  name: string;
  description: string | null;
  metadata: Json;
  settings: Json;
  created_at: Timestamp;
  updated_at: NullableTimestamp;
}

export interface RoleRestrictedFeaturesTable {
  app_id: string;
  role: string;
  feature: string;
  created_at: Timestamp;
}

export interface RolePermissionsTable {
  app_id: string;
  role: string;
  permission: string;
  /** A string or an array of strings, as JSON. */
  value: ColumnType<unknown, string, string>;
  created_at: Timestamp;
  updated_at: NullableTimestamp;
}

export interface GroupScopePermissionsTable {
  app_id: string;
  guid: string;
  scope: MemberScope;
  permission: string;
  value: ColumnType<unknown, string, string>;
  created_at: Timestamp;
  updated_at: NullableTimestamp;
}

export type ReceiverType = 'user' | 'group';

export interface MessagesTable {
  app_id: string;
  /** bigint: a string of digits on both engines (see database.ts). */
  id: ColumnType<string, never, never>;
  conversation_id: string;
  sender: string;
  receiver: string;
  receiver_type: ReceiverType;
  category: string;
  type: string;
  data: ColumnType<unknown, string, string>;
  tags: ColumnType<string[], string[] | undefined, string[]>;
  mentioned_uids: ColumnType<string[], string[] | undefined, string[]>;
  muid: string | null;
  parent_id: ColumnType<string | null, string | null | undefined, string | null>;
  reply_count: Generated<number>;
  sent_at: Timestamp;
  updated_at: NullableTimestamp;
  edited_at: NullableTimestamp;
  edited_by: string | null;
  deleted_at: NullableTimestamp;
  deleted_by: string | null;
  /** An imported message's source receipts (0008); NULL otherwise. */
  delivered_at: NullableTimestamp;
  read_at: NullableTimestamp;
  /** The message's stored text (0017, shownText in services/views/shown-messages.ts); NULL: rendered from the columns. */
  shown: ColumnType<string | null, string | null | undefined, string | null>;
  /** Held for moderation review (0018): shown to its sender only (repositories/message-visibility.ts). */
  held: Generated<boolean>;
}

export interface ConversationsTable {
  app_id: string;
  conversation_id: string;
  conversation_type: ReceiverType;
  last_message_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Changes to a conversation's messages and reactions, counted by triggers (0009). */
export interface ConversationVersionsTable {
  app_id: string;
  conversation_id: string;
  version: ColumnType<string, string | undefined, string>;
}

/** A participant's side of a 1:1 conversation. */
export interface UserConversationsTable {
  app_id: string;
  uid: string;
  conversation_id: string;
  conversation_with: string;
  created_at: Timestamp;
}

/** One user's state of a conversation: receipts, cleared history, tags (0007). */
export interface ConversationStatesTable {
  app_id: string;
  uid: string;
  conversation_id: string;
  delivered_message_id: ColumnType<string | null, string | null | undefined, string | null>;
  delivered_at: NullableTimestamp;
  read_message_id: ColumnType<string | null, string | null | undefined, string | null>;
  read_at: NullableTimestamp;
  cleared_message_id: ColumnType<string | null, string | null | undefined, string | null>;
  tags: ColumnType<string[], string[] | undefined, string[]>;
  updated_at: Timestamp;
}

/** One user's reaction to a message. */
export interface MessageReactionsTable {
  app_id: string;
  /** bigint: a string of digits on both engines (see database.ts). */
  id: ColumnType<string, never, never>;
  message_id: ColumnType<string, string, never>;
  reaction: string;
  uid: string;
  reacted_at: Timestamp;
}

/** The event log (migration 0013, docs/events.md). */
export interface EventsTable {
  app_id: string;
  tx: Generated<string>;
  id: Generated<string>;
  trigger: string;
  conversation_id: string | null;
  message_id: string | null;
  data: ColumnType<unknown, string | null, string | null>;
  created_at: Generated<Date>;
}

export interface DB {
  apps: AppsTable;
  api_keys: ApiKeysTable;
  app_rate_limits: AppRateLimitsTable;
  users: UsersTable;
  user_counts: UserCountsTable;
  auth_tokens: AuthTokensTable;
  groups: GroupsTable;
  group_members: GroupMembersTable;
  group_bans: GroupBansTable;
  friends: FriendsTable;
  blocked_users: BlockedUsersTable;
  roles: RolesTable;
  role_restricted_features: RoleRestrictedFeaturesTable;
  role_permissions: RolePermissionsTable;
  group_scope_permissions: GroupScopePermissionsTable;
  messages: MessagesTable;
  conversations: ConversationsTable;
  conversation_versions: ConversationVersionsTable;
  user_conversations: UserConversationsTable;
  conversation_states: ConversationStatesTable;
  message_reactions: MessageReactionsTable;
  events: EventsTable;
}

/** A management credential of the deployment (migration 0014, docs/management-api.md). */
export interface ManagementKeysTable {
  key: string;
  /** SHA-256 of the secret, hex. */
  secret_hash: string;
  name: string;
  created_at: Generated<Date>;
}

/** An app whose delete has begun (migration 0014). */
export interface AppDeletionsTable {
  app_id: string;
  requested_at: Generated<Date>;
}

/** The vendor's "map settings" of an app (migration 0014). */
export interface AppSettingsTable {
  app_id: string;
  key: string;
  value: boolean;
  updated_at: Timestamp;
}

/** An app's webhook (migration 0014). */
export interface WebhooksTable {
  app_id: string;
  id: string;
  name: string;
  url: string;
  use_basic_auth: boolean;
  username: string | null;
  /** Kept as given: deliveries send it in HTTP Basic auth. */
  password: string | null;
  enabled: boolean;
  retry_on_failure: boolean;
  /** Trigger names, sorted and distinct. */
  triggers: ColumnType<string[], string[] | undefined, string[]>;
  /** Signs deliveries; shown once, at creation. */
  signing_secret: string;
  created_at: Generated<Date>;
  updated_at: Timestamp;
  /** A rotated secret, still signing beside the new one until `previous_secret_expires_at` (migration 0015). */
  previous_signing_secret: ColumnType<string | null, string | null | undefined, string | null>;
  previous_secret_expires_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

// The management API's tables, merged into DB (TypeScript merges the two declarations).
export interface DB {
  management_keys: ManagementKeysTable;
  app_deletions: AppDeletionsTable;
  app_settings: AppSettingsTable;
  webhooks: WebhooksTable;
}

// Moderation's tables (moderation-tables.ts, migration 0018), merged into DB.
export interface DB {
  moderation_rules: ModerationRulesTable;
  moderation_rule_revisions: ModerationRuleRevisionsTable;
  moderation_keyword_lists: ModerationKeywordListsTable;
  moderation_deleted_defaults: ModerationDeletedDefaultsTable;
  moderation_versions: ModerationVersionsTable;
  moderation_hooks: ModerationHooksTable;
  moderation_blocked_messages: ModerationBlockedMessagesTable;
  moderation_reasons: ModerationReasonsTable;
  moderation_flagged_messages: ModerationFlaggedMessagesTable;
  moderation_flags: ModerationFlagsTable;
}
