-- Moderation (docs/moderation.md): rules and keyword lists evaluated on each message before it
-- is stored, messages held for review, reasons and users' flags, and the moderation hook.

-- A message held for review (blocked by a rule, the hook, or a moderator's disapproval): shown to
-- its sender only (repositories/message-visibility.ts, the one rule every reader applies). A
-- held message stays out of its conversation: it does not move the conversation's last message
-- nor create it (repositories/message-store/held-messages.repository.ts puts it in when it is
-- released). Nearly every message is never held: the column costs its readers nothing.
ALTER TABLE messages ADD COLUMN held boolean NOT NULL DEFAULT false;

-- Moderation events name their message (rendered when delivered) and carry what held it.
ALTER TABLE events DROP CONSTRAINT events_check;
ALTER TABLE events ADD CONSTRAINT events_message_or_data CHECK (message_id IS NOT NULL OR data IS NOT NULL);

-- An app's rules, as last changed (its built-in rules are in the code until changed:
-- domain/moderation/defaults.ts). `revision` counts its versions from 1.
CREATE TABLE moderation_rules (
  app_id      text NOT NULL,
  id          text COLLATE "C" NOT NULL,
  revision    integer NOT NULL,
  name        text NOT NULL,
  description text,
  enabled     boolean NOT NULL,
  -- As the API shows them (domain/moderation/rules.ts: RuleCondition[], RuleAction[]).
  conditions  jsonb NOT NULL,
  action      jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, id)
);

-- Every version of every rule, the current one included: list-rule-revisions.
CREATE TABLE moderation_rule_revisions (
  app_id     text NOT NULL,
  rule_id    text COLLATE "C" NOT NULL,
  revision   integer NOT NULL,
  -- The rule as it was (name, description, enabled, conditions, action).
  rule       jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, rule_id, revision)
);

-- An app's keyword lists (its built-in lists are in the code until changed).
CREATE TABLE moderation_keyword_lists (
  app_id       text NOT NULL,
  id           text COLLATE "C" NOT NULL,
  revision     integer NOT NULL,
  name         text NOT NULL,
  description  text,
  category     text NOT NULL CHECK (category IN ('word', 'pattern')),
  is_csv       boolean NOT NULL,
  search_terms text[] NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, id)
);

-- Built-in rules and lists an app deleted (a tombstone): they are no longer listed or applied.
CREATE TABLE moderation_deleted_defaults (
  app_id     text NOT NULL,
  kind       text NOT NULL CHECK (kind IN ('rule', 'list', 'reason')),
  id         text COLLATE "C" NOT NULL,
  deleted_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, kind, id)
);

-- The version of an app's moderation set-up (rules, lists, hook): moved by every change in the
-- change's transaction, so a node's compiled matcher knows when it is stale.
CREATE TABLE moderation_versions (
  app_id  text PRIMARY KEY,
  version bigint NOT NULL
);

-- The app's moderation hook (docs/moderation.md): an endpoint asked before a message is stored.
CREATE TABLE moderation_hooks (
  app_id     text PRIMARY KEY,
  url        text NOT NULL,
  enabled    boolean NOT NULL,
  timeout_ms integer NOT NULL,
  -- What a failed call (no answer in time, an error, a bad answer) does: open lets the message
  -- through, closed holds it for review.
  on_failure text NOT NULL CHECK (on_failure IN ('open', 'closed')),
  -- Signs each call (X-Parley-Signature), as webhook deliveries are signed.
  secret     text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Messages held by the engine or the hook, with what held them, until a moderator reviews them
-- (review-blocked-message). The rule's name, revision and condition are copied: the rule may
-- change or go while the message waits.
CREATE TABLE moderation_blocked_messages (
  app_id      text NOT NULL,
  message_id  bigint NOT NULL,
  rule_id     text NOT NULL,
  rule_name   text NOT NULL,
  revision_id text NOT NULL,
  condition   jsonb,
  action      jsonb NOT NULL,
  -- A send (or reply) held before anyone saw it, or an edit of a message already shown.
  kind        text NOT NULL CHECK (kind IN ('send', 'edit')),
  status      text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
  reviewed    boolean NOT NULL DEFAULT false,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, message_id),
  FOREIGN KEY (app_id, message_id) REFERENCES messages (app_id, id) ON DELETE CASCADE
);
-- A status's records, newest held first; the reviewed ones, last reviewed first (list-reviewed-messages).
CREATE INDEX moderation_blocked_messages_status ON moderation_blocked_messages (app_id, status, message_id);
CREATE INDEX moderation_blocked_messages_reviewed ON moderation_blocked_messages (app_id, updated_at DESC, message_id DESC) WHERE reviewed;

-- Reasons users flag messages for (their built-in reasons are in the code until changed).
CREATE TABLE moderation_reasons (
  app_id      text NOT NULL,
  id          text COLLATE "C" NOT NULL,
  name        text NOT NULL,
  description text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, id)
);

-- Messages users flagged, waiting for review (pending) or reviewed.
CREATE TABLE moderation_flagged_messages (
  app_id      text NOT NULL,
  message_id  bigint NOT NULL,
  status      text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'disapproved')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  reviewed_at timestamptz,
  PRIMARY KEY (app_id, message_id),
  FOREIGN KEY (app_id, message_id) REFERENCES messages (app_id, id) ON DELETE CASCADE
);
-- The pending queue, last flagged first; the reviewed list, last reviewed first.
CREATE INDEX moderation_flagged_messages_pending ON moderation_flagged_messages (app_id, updated_at DESC, message_id DESC) WHERE status = 'pending';
CREATE INDEX moderation_flagged_messages_reviewed ON moderation_flagged_messages (app_id, reviewed_at DESC, message_id DESC) WHERE status <> 'pending';

-- Each user's flag of a message: one per user and message (flagging again replaces it).
CREATE TABLE moderation_flags (
  app_id     text NOT NULL,
  message_id bigint NOT NULL,
  uid        text COLLATE "C" NOT NULL,
  reason_id  text NOT NULL,
  remark     text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, message_id, uid),
  FOREIGN KEY (app_id, message_id) REFERENCES moderation_flagged_messages (app_id, message_id) ON DELETE CASCADE,
  -- A permanently deleted user's flags go with them.
  FOREIGN KEY (app_id, uid) REFERENCES users (app_id, uid) ON DELETE CASCADE
);
