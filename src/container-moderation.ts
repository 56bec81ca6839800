import type { Database } from './db/database.js';
import { silentLogger, type Logger } from './domain/context.js';
import { compileMatcher } from './domain/moderation/matcher.js';
import type { AppsRepository } from './repositories/apps.repository.js';
import type { EventsRepository } from './repositories/events.repository.js';
import type { ConversationsRepository } from './repositories/message-store/conversations.repository.js';
import type { HeldMessagesRepository } from './repositories/message-store/held-messages.repository.js';
import type { MessagesRepository } from './repositories/messages.repository.js';
import type { BlockedMessagesRepository } from './repositories/moderation/blocked-messages.repository.js';
import { FlagsRepository } from './repositories/moderation/flags.repository.js';
import { ModerationHooksRepository } from './repositories/moderation/hooks.repository.js';
import { KeywordListsRepository } from './repositories/moderation/keyword-lists.repository.js';
import { ReasonsRepository } from './repositories/moderation/reasons.repository.js';
import { ModerationRulesRepository } from './repositories/moderation/rules.repository.js';
import { MODERATION_CHANNEL, ModerationSetupRepository } from './repositories/moderation/setup.repository.js';
import type { MessageHistoryService } from './services/message-history.service.js';
import { BlockedMessagesService } from './services/moderation/blocked.service.js';
import { FlagsService } from './services/moderation/flags.service.js';
import { ModerationHookClient } from './services/moderation/hook-client.js';
import { ModerationHookService } from './services/moderation/hook.service.js';
import { ModerationHolds } from './services/moderation/holds.service.js';
import { KeywordListsService } from './services/moderation/keyword-lists.service.js';
import { Moderator } from './services/moderation/moderator.js';
import { ReasonsService } from './services/moderation/reasons.service.js';
import { RulesService } from './services/moderation/rules.service.js';
import { ModerationSetups } from './services/moderation/setups.js';
import { SetupChanges } from './services/moderation/setup-changes.js';
import type { UsersService } from './services/users.service.js';

/**
 * Moderation's part of the composition root (docs/moderation.md): the rules, lists and hook, each
 * app's compiled set-up kept by this node, the seam every message passes before it is stored
 * (Moderator), and the reviews that hide and show messages. container.ts calls it once.
 */
export function createModeration(
  database: Database,
  deps: {
    repositories: {
      apps: AppsRepository;
      events: EventsRepository;
      messages: MessagesRepository;
      conversations: ConversationsRepository;
      heldMessages: HeldMessagesRepository;
      blockedMessages: BlockedMessagesRepository;
    };
    history: MessageHistoryService;
    users: UsersService;
    allowPrivate: boolean;
  },
) {
  const db = database.db;
  const { repositories, history } = deps;
  const setup = new ModerationSetupRepository(db);
  // A change to an app's rules, lists or hook, after its commit: this node compiles the app's
  // set-up again when next needed, and on PostgreSQL the other nodes are told (NOTIFY).
  const changed = (appId: string): void => {
    setups.invalidate(appId);
    if (database.engine === 'postgres') setup.signal().catch(() => undefined);
  };
  const changes = new SetupChanges({ db, setup, changed });
  const rulesDeps = { rules: new ModerationRulesRepository(db), lists: new KeywordListsRepository(db), setup, changes };
  const moderationRules = new RulesService(rulesDeps);
  const keywordLists = new KeywordListsService(rulesDeps);
  // The moderation hook: its settings, and the client that asks it (signed, timed, addresses checked as webhooks').
  const hooks = new ModerationHooksRepository(db);
  const moderationHook = new ModerationHookService({ hooks, changes, allowPrivate: deps.allowPrivate });
  const hookClient = new ModerationHookClient({ allowPrivate: deps.allowPrivate });
  // Each app's compiled set-up, kept by this node: a send is moderated with no round trip; a
  // change here drops it at once, one on another node marks it suspect (NOTIFY), and a copy is
  // trusted 10 s at most; 256 MB of compiled matchers at most.
  const listen = database.listen;
  const setups = new ModerationSetups({
    load: async (appId) => {
      const stored = await moderationRules.setup({ appId, requestId: 'moderation', log: silentLogger });
      // Read after the rules' version: a hook changed meanwhile moves the version again.
      return { version: stored.version, rules: stored.rules, lists: stored.lists, hook: await hooks.get(appId) };
    },
    version: (appId) => setup.version(appId),
    compile: compileMatcher,
    maxBytes: 256 * 1024 * 1024,
    recheckMs: 10_000,
    ...(listen ? { listen: (onNotify: () => void, log: Logger) => listen(MODERATION_CHANNEL, onNotify, log) } : {}),
  });
  const moderator = new Moderator({ setups, ask: (hook, question) => hookClient.ask(hook, question), events: repositories.events, db });
  // Moderators' reviews hide and show messages.
  const holds = new ModerationHolds({ conversations: repositories.conversations, held: repositories.heldMessages, blocked: repositories.blockedMessages, events: repositories.events });
  const moderationBlocked = new BlockedMessagesService({ db, blocked: repositories.blockedMessages, messages: repositories.messages, history, holds });
  // Reasons, users' flags of messages and their review (a disapproved message is held).
  const moderationReasons = new ReasonsService({ db, reasons: new ReasonsRepository(db), apps: repositories.apps });
  const moderationFlags = new FlagsService({ db, flags: new FlagsRepository(db), messages: repositories.messages, history, usersService: deps.users, reasons: moderationReasons, holds });
  // What the server starts and stops: hearing other nodes' changes, and the hook's connections.
  const lifecycle = {
    start: (log: Logger) => setups.start(log),
    stop: async () => {
      await setups.stop();
      hookClient.close();
    },
  };
  return {
    moderator,
    holds,
    setups,
    lifecycle,
    services: { moderationRules, keywordLists, moderationHook, moderationBlocked, moderationReasons, moderationFlags },
  };
}
