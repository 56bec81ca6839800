import { ForeignKeyViolation } from '../db/driver-errors.js';
import type { Static } from '@sinclair/typebox';
import { withTransaction } from '../db/transaction.js';
import type { RequestContext } from '../domain/context.js';
import { groupConversationKey, userConversationKey } from '../domain/conversation-id.js';
import { AppError, badRequest } from '../domain/errors.js';
import { LIMITS, normalizeId, unixSecondsToDate } from '../domain/normalize.js';
import type { GroupRow } from '../repositories/groups.repository.js';
import type { MessageImportsRepository } from '../repositories/message-store/message-imports.repository.js';
import type { MessageRow } from '../repositories/messages.repository.js';
import type { NewUser, UserRow } from '../repositories/users.repository.js';
import type { ImportUserRecord } from '../schemas/data-import.schema.js';
import { prepare } from './message-content.js';
import type { MessageHistoryService } from './message-history.service.js';
import type { Moderator } from './moderation/moderator.js';
import type { Message } from './views/messages.view.js';
import { shownText } from './views/shown-messages.js';

import {
  MESSAGE_CHUNK,
  MESSAGES,
  validateMessage,
  recordsOf,
  check,
  attempt,
  failure,
  firstOfEach,
  chunks,
  distinct,
  ImportCounts,
  prepareUser,
  prepareGroup,
  type RecordResult,
  type ImportMessage,
  type MessageCandidate,
} from './import-records.js';
import type { ImportCallDeps } from './imported-entities.js';

/**
 * The data import's messages (docs/compatibility.md, "Data import"): each record validated with the REST path's rules and
 * answered on its own, the users and groups its *Details name created first, then the messages
 * stored a chunk per transaction (MessageImportsRepository.insertMany).
 */
export class MessageImportService {
  /** The records answered, for the metrics. */
  readonly records = new ImportCounts();

  constructor(
    private readonly deps: ImportCallDeps & {
      messageImports: MessageImportsRepository;
      /** Renders the imported messages as every other message. */
      history: MessageHistoryService;
      /** `?moderate=true`: the content moderated with the app's rules (docs/moderation.md). */
      moderator: Pick<Moderator, 'moderate'>;
    },
  ) {}

  /**
   * Messages, in history order: the call's messages are stored in sentAt order (then the order
   * sent), so their ids, which are the order of every history, follow sentAt. Their
   * conversations are created or moved on as a send would, and the receipts given move the
   * readers' watermarks. The content rules are those of send-message (prepare); the sender and
   * receiver must exist, or be created by their *Details, but the rules of a live send
   * (membership, bans, blocks) do not apply to history. A muid the sender imported (or sent)
   * before answers ERR_IMPORT_MUID_ALREADY_EXISTS.
   */
  async importMessages(ctx: RequestContext, body: unknown, options: { recordEvents?: boolean; moderate?: boolean } = {}): Promise<Record<string, RecordResult<Message>>> {
    const entries = recordsOf(body, MESSAGES, this.deps.maxRecords);
    const results = new Map<string, RecordResult<Message>>();
    let candidates: MessageCandidate[] = [];
    const now = Date.now();
    for (const [key, raw] of entries) {
      const outcome = attempt((): MessageCandidate => {
        check(validateMessage, raw);
        const record = raw as ImportMessage;
        const {
          sender: rawSender,
          receiver: rawReceiver,
          receiverType,
          sentAt: rawSentAt,
          deliveredAt: rawDeliveredAt,
          readAt: rawReadAt,
          senderUserDetails,
          receiverUserDetails,
          receiverGroupDetails,
          receiverGroupOwnerDetails,
          mentionedUserDetails,
          ...content
        } = record;
        if (JSON.stringify(content).length > LIMITS.messageJsonChars) {
          throw badRequest({ record: `the message must be at most ${LIMITS.messageJsonChars} characters as JSON` });
        }
        const prepared = prepare(content);
        const sender = normalizeId(rawSender);
        const receiver = normalizeId(rawReceiver);
        const sentAt = unixSecondsToDate(rawSentAt);
        if (sentAt.getTime() > now) throw badRequest({ sentAt: 'must not be in the future' });
        const readAt = rawReadAt === undefined ? null : unixSecondsToDate(rawReadAt);
        // A message read was delivered, at the latest when it was read.
        const deliveredAt = rawDeliveredAt === undefined ? readAt : unixSecondsToDate(rawDeliveredAt);
        if (readAt && readAt < sentAt) throw badRequest({ readAt: 'must not be before sentAt' });
        if (deliveredAt && deliveredAt < sentAt) throw badRequest({ deliveredAt: 'must not be before sentAt' });

        const users: NewUser[] = [];
        const details = (record: Static<typeof ImportUserRecord> | undefined, field: string, uid: string | undefined) => {
          if (!record) return;
          const user = prepareUser(record, `${field}.`);
          if (uid !== undefined && user.uid !== uid) throw badRequest({ [`${field}.uid`]: `must be ${uid}` });
          users.push(user);
        };
        details(senderUserDetails, 'senderUserDetails', sender);
        if (receiverUserDetails && receiverType !== 'user') throw badRequest({ receiverUserDetails: 'is for a user receiver' });
        details(receiverUserDetails, 'receiverUserDetails', receiver);
        if ((receiverGroupDetails || receiverGroupOwnerDetails) && receiverType !== 'group') {
          throw badRequest({ receiverGroupDetails: 'is for a group receiver' });
        }
        const group = receiverGroupDetails && prepareGroup(receiverGroupDetails, undefined, 'receiverGroupDetails.');
        if (group && group.group.guid !== receiver) throw badRequest({ 'receiverGroupDetails.guid': `must be ${receiver}` });
        if (receiverGroupOwnerDetails) {
          if (!group) throw badRequest({ receiverGroupOwnerDetails: 'comes with receiverGroupDetails' });
          details(receiverGroupOwnerDetails, 'receiverGroupOwnerDetails', group.group.owner ?? undefined);
          group.group.owner ??= users[users.length - 1]!.uid;
        }
        for (const [uid, user] of Object.entries(mentionedUserDetails ?? {})) details(user, `mentionedUserDetails.${uid}`, normalizeId(uid));

        const row: MessageCandidate['row'] = {
          conversationId: receiverType === 'user' ? userConversationKey(sender, receiver) : groupConversationKey(receiver),
          sender,
          receiver,
          receiverType,
          category: prepared.category,
          type: prepared.type,
          dataJson: prepared.dataJson,
          data: prepared.data,
          tags: prepared.tags,
          mentionedUids: [],
          muid: record.muid,
          sentAt,
          deliveredAt,
          readAt,
        };
        return { key, row, mentioned: prepared.mentioned, users, group };
      });
      if (outcome instanceof AppError) results.set(key, failure(outcome));
      else candidates.push(outcome);
    }
    if (options.moderate) candidates = await this.moderated(ctx, candidates, results);
    candidates = await this.deps.entities.withExistingRoles(ctx, candidates, (c) => c.users.map((user) => user.role), results);

    // *Details first: the users, then the groups (whose owner may be one of those users).
    await this.deps.entities.createDetailUsers(
      ctx,
      candidates.flatMap((c) => c.users),
    );
    const detailGroups = firstOfEach(
      candidates.flatMap((c) => (c.group ? [c.group] : [])),
      (g) => g.group.guid,
      () => {},
    );
    const groupOutcomes = await this.deps.entities.createGroups(ctx, detailGroups);
    candidates = candidates.filter((c) => {
      const outcome = c.group && groupOutcomes.get(c.group.group.guid);
      if (outcome instanceof AppError && outcome.code !== 'ERR_GUID_ALREADY_EXISTS') {
        results.set(c.key, failure(outcome));
        return false;
      }
      return true;
    });

    // History order: by sentAt, then as sent (a stable sort keeps the body's order).
    const ordered = [...candidates].sort((a, b) => a.row.sentAt.getTime() - b.row.sentAt.getTime());
    const stored: Array<{ key: string; row: MessageRow }> = [];
    const known = { users: new Map<string, UserRow>(), groups: new Map<string, GroupRow>() };
    for (const chunk of chunks(ordered, MESSAGE_CHUNK)) {
      const answers = await this.storeMessages(ctx, chunk, options.recordEvents === true);
      for (const user of answers.users) known.users.set(user.uid, user);
      for (const group of answers.groups) known.groups.set(group.guid, group);
      for (const [key, error] of answers.refused) results.set(key, failure(error));
      let written = 0;
      answers.insertable.forEach((c, n) => {
        const row = answers.rows[n];
        if (row) {
          stored.push({ key: c.key, row });
          written++;
        } else results.set(c.key, failure(new AppError('ERR_IMPORT_MUID_ALREADY_EXISTS', { params: { muid: c.row.muid, sender: c.row.sender } })));
      });
      this.deps.noteBulkWrite(written);
    }
    const rendered = await this.deps.history.render(
      ctx,
      stored.map((s) => s.row),
      {
        withTags: true,
        justStored: true,
        known: { users: [...known.users.values()], groups: [...known.groups.values()] },
      },
    );
    stored.forEach(({ key }, n) => results.set(key, { success: true, data: rendered[n]! }));
    return this.records.answer(ctx.appId, 'messages', entries, results);
  }

  /**
   * `?moderate=true` (docs/moderation.md): each record's content moderated with the app's rules
   * (not its hook: an import of thousands of records would call it thousands of times). An
   * import holds nothing for review: a record a rule drops or blocks is refused with
   * ERR_BLOCKED_BY_EXTENSION, so the call's answer lists it; the others carry their status.
   */
  private async moderated(ctx: RequestContext, candidates: MessageCandidate[], results: Map<string, RecordResult<Message>>): Promise<MessageCandidate[]> {
    const kept: MessageCandidate[] = [];
    for (const candidate of candidates) {
      const { row } = candidate;
      const content = { category: row.category, type: row.type, dataJson: row.dataJson, data: row.data ?? {}, tags: row.tags, mentioned: candidate.mentioned, muid: row.muid };
      const subject = { kind: 'send' as const, sender: row.sender, receiver: row.receiver, receiverType: row.receiverType, conversationId: row.conversationId };
      try {
        const moderated = await this.deps.moderator.moderate(ctx, content, subject, { hook: false });
        if (moderated.outcome === 'held') {
          const heldBy = moderated.heldBy;
          throw new AppError('ERR_BLOCKED_BY_EXTENSION', { params: { rule: heldBy.ruleId, name: heldBy.ruleName }, details: { ruleId: heldBy.ruleId, revisionId: heldBy.revisionId } });
        }
        row.dataJson = moderated.prepared.dataJson;
        row.data = moderated.prepared.data;
        kept.push(candidate);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        results.set(candidate.key, failure(error));
      }
    }
    return kept;
  }

  /**
   * One chunk of import-messages in one transaction: the records whose sender and receiver
   * exist are stored. Users are read without a lock (a key-share lock on thousands of rows costs
   * more than the rest); a user deleted meanwhile makes the insert violate a foreign key, and
   * the chunk is tried again, which then refuses that user's records.
   */
  private async storeMessages(ctx: RequestContext, chunk: MessageCandidate[], recordEvents: boolean) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await withTransaction(
          this.deps.db,
          'import_messages',
          async (tx) => {
            const refused = new Map<string, AppError>();
            const uids = distinct(chunk.flatMap((c) => [c.row.sender, ...(c.row.receiverType === 'user' ? [c.row.receiver] : []), ...c.mentioned]));
            const users = await this.deps.users.getMany(ctx.appId, uids, tx);
            const userByUid = new Map(users.map((user) => [user.uid, user]));
            const groupIds = distinct(chunk.flatMap((c) => (c.row.receiverType === 'group' ? [c.row.receiver] : [])));
            const groups = await this.deps.messageImports.lockExistingGroups(ctx.appId, groupIds, tx);
            const guids = new Set(groups.map((group) => group.guid));
            const insertable = chunk.filter((c) => {
              const { sender, receiver, receiverType } = c.row;
              if (!userByUid.has(sender)) refused.set(c.key, new AppError('ERR_UID_NOT_FOUND', { params: { uid: sender } }));
              else if (receiverType === 'user' && !userByUid.has(receiver)) refused.set(c.key, new AppError('ERR_UID_NOT_FOUND', { params: { uid: receiver } }));
              else if (receiverType === 'group' && !guids.has(receiver)) refused.set(c.key, new AppError('ERR_GUID_NOT_FOUND', { params: { guid: receiver } }));
              else {
                // Mentions are kept for active users, as on send-message.
                c.row.mentionedUids = c.mentioned.filter((uid) => userByUid.get(uid)?.deactivated_at === null);
                // Its stored text, as a send's (an import with source receipts has none).
                c.row.shown = shownText(c.row);
                return true;
              }
              return false;
            });
            const rows = await this.deps.messageImports.insertMany(
              ctx.appId,
              insertable.map((c) => c.row),
              tx,
              { recordEvents },
            );
            return { refused, insertable, rows, users, groups };
          },
          ctx.log,
        );
      } catch (error) {
        if (!(error instanceof ForeignKeyViolation) || attempt >= 3) throw error;
      }
    }
  }
}
