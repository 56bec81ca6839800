import type { ColumnType } from 'kysely';

// Moderation's tables (migration 0018, docs/moderation.md), merged into DB by schema.ts.

/** A timestamp column: read as Date, written as Date (or left to its default). */
type Timestamp = ColumnType<Date, Date | undefined, Date>;
type NullableTimestamp = ColumnType<Date | null, Date | null | undefined, Date | null>;
/** A column read as a Generated default. */
type Generated<T> = ColumnType<T, T | undefined, T>;

type JsonB = ColumnType<unknown, string, string>;

/** An app's moderation rule, as last changed (migration 0018, docs/moderation.md). */
export interface ModerationRulesTable {
  app_id: string;
  id: string;
  revision: number;
  name: string;
  description: string | null;
  enabled: boolean;
  conditions: JsonB;
  action: JsonB;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A version of a rule (migration 0018). */
export interface ModerationRuleRevisionsTable {
  app_id: string;
  rule_id: string;
  revision: number;
  rule: JsonB;
  created_at: Timestamp;
}

/** An app's keyword list (migration 0018). */
export interface ModerationKeywordListsTable {
  app_id: string;
  id: string;
  revision: number;
  name: string;
  description: string | null;
  category: 'word' | 'pattern';
  is_csv: boolean;
  search_terms: string[];
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A built-in rule, list or reason an app deleted (migration 0018). */
export interface ModerationDeletedDefaultsTable {
  app_id: string;
  kind: 'rule' | 'list' | 'reason';
  id: string;
  deleted_at: Timestamp;
}

/** The version of an app's moderation set-up (migration 0018). */
export interface ModerationVersionsTable {
  app_id: string;
  version: ColumnType<string, string | number, string | number>;
}

/** An app's moderation hook (migration 0018). */
export interface ModerationHooksTable {
  app_id: string;
  url: string;
  enabled: boolean;
  timeout_ms: number;
  on_failure: 'open' | 'closed';
  secret: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A message held by the engine or the hook (migration 0018). */
export interface ModerationBlockedMessagesTable {
  app_id: string;
  message_id: ColumnType<string, string, string>;
  rule_id: string;
  rule_name: string;
  revision_id: string;
  condition: ColumnType<unknown, string | null, string | null>;
  action: JsonB;
  kind: 'send' | 'edit';
  status: ColumnType<'pending' | 'approved' | 'rejected', 'pending' | 'approved' | 'rejected' | undefined, 'pending' | 'approved' | 'rejected'>;
  reviewed: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A reason to flag a message (migration 0018). */
export interface ModerationReasonsTable {
  app_id: string;
  id: string;
  name: string;
  description: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A message users flagged (migration 0018). */
export interface ModerationFlaggedMessagesTable {
  app_id: string;
  message_id: ColumnType<string, string, string>;
  status: ColumnType<'pending' | 'approved' | 'disapproved', 'pending' | 'approved' | 'disapproved' | undefined, 'pending' | 'approved' | 'disapproved'>;
  created_at: Timestamp;
  updated_at: Timestamp;
  reviewed_at: NullableTimestamp;
}

/** A user's flag of a message (migration 0018). */
export interface ModerationFlagsTable {
  app_id: string;
  message_id: ColumnType<string, string, string>;
  uid: string;
  reason_id: string;
  remark: string | null;
  created_at: Timestamp;
}
