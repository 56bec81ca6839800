import type { Kysely } from 'kysely';
import { ForeignKeyViolation } from '../../db/driver-errors.js';
import type { DB } from '../../db/schema.js';
import { withTransaction } from '../../db/transaction.js';
import type { RequestContext } from '../../domain/context.js';
import { AppError, badRequest, type ErrorDetails } from '../../domain/errors.js';
import { normalizeId } from '../../domain/normalize.js';
import { NOTIFICATION_LIMITS } from '../../domain/notifications/preferences-input.js';
import type { ConversationType, MutedConversation } from '../../domain/notifications/preferences.js';
import type { MuteRow, MutesRepository } from '../../repositories/notifications/mutes.repository.js';
import { uidNotFound, type UsersService } from '../users.service.js';
import { mutedConversationView } from './preferences-views.js';

/** A conversation to mute: the other user's uid (oneOnOne) or the group's guid, until a time in unix ms (none: until unmuted). */
export interface MuteInput {
  id: string;
  type: ConversationType;
  until?: number;
}

const guidNotFound = (guid: string) => new AppError('ERR_GUID_NOT_FOUND', { params: { guid } });

function toMuted(row: MuteRow): MutedConversation {
  return { type: row.kind, id: row.target, until: row.until === null ? null : row.until.getTime() };
}

/**
 * The conversations a user muted (notifications-push-*-muted, -mute-conversations,
 * -unmute-conversations): 1:1 conversations, named by the other user, and groups. A mute ends
 * at its `until`, or when unmuted; it goes with the user who muted, the user muted or the group.
 */
export class MutesService {
  constructor(private readonly deps: { db: Kysely<DB>; mutes: MutesRepository; users: Pick<UsersService, 'requireActive'> }) {}

  /** The user's mutes on now (MutedConversation, the delivery engine's shape). */
  async muted(ctx: RequestContext, rawUid: string): Promise<MutedConversation[]> {
    const { uid } = await this.deps.users.requireActive(ctx, rawUid);
    return (await this.deps.mutes.list(ctx.appId, uid, new Date())).map(toMuted);
  }

  /** notifications-push-list-muted. */
  async list(ctx: RequestContext, rawUid: string): Promise<{ mutedConversations: Array<{ id: string; type: string; until?: number }> }> {
    return { mutedConversations: (await this.muted(ctx, rawUid)).map(mutedConversationView) };
  }

  /**
   * notifications-push-mute-conversations: all of them or none. Each names an active user of the
   * app (not the user themselves) or a group of the app (else ERR_UID_NOT_FOUND or
   * ERR_GUID_NOT_FOUND), and an `until` in the future; muting again sets the new `until`. A user
   * mutes NOTIFICATION_LIMITS.mutesPerUser conversations at most.
   */
  async mute(ctx: RequestContext, rawUid: string, conversations: readonly MuteInput[]): Promise<{ success: true }> {
    const now = Date.now();
    const problems: ErrorDetails = {};
    conversations.forEach((c, i) => {
      if (c.until !== undefined && c.until <= now) problems[`conversations[${i}].until`] = 'must be a time in the future, in unix milliseconds';
    });
    if (Object.keys(problems).length > 0) throw badRequest(problems);
    const { uid } = await this.deps.users.requireActive(ctx, rawUid);
    // One per conversation, the last one given winning (one statement cannot write a row twice).
    const byKey = new Map<string, MuteRow>();
    for (const [i, c] of conversations.entries()) {
      const target = normalizeId(c.id);
      if (c.type === 'oneOnOne' && target === uid) problems[`conversations[${i}].id`] = 'cannot be the user themselves';
      byKey.set(`${c.type}:${target}`, { kind: c.type, target, until: c.until === undefined ? null : new Date(c.until) });
    }
    if (Object.keys(problems).length > 0) throw badRequest(problems);
    const mutes = [...byKey.values()];
    const targets = (kind: ConversationType) => mutes.filter((m) => m.kind === kind).map((m) => m.target);
    const missing = await this.deps.mutes.missingTargets(ctx.appId, targets('oneOnOne'), targets('group'));
    if (missing.uids.length > 0) throw uidNotFound(missing.uids[0]!);
    if (missing.guids.length > 0) throw guidNotFound(missing.guids[0]!);
    try {
      await withTransaction(
        this.deps.db,
        'mute_conversations',
        async (tx) => {
          await this.deps.mutes.lock(ctx.appId, uid, tx);
          await this.deps.mutes.removeEnded(ctx.appId, uid, new Date(), tx);
          await this.deps.mutes.upsert(ctx.appId, uid, mutes, tx);
          if ((await this.deps.mutes.count(ctx.appId, uid, tx)) > NOTIFICATION_LIMITS.mutesPerUser) {
            throw new AppError('ERR_PLAN_QUOTA_RESTRICTION', { params: { limit: NOTIFICATION_LIMITS.mutesPerUser, what: 'muted conversations per user' } });
          }
        },
        ctx.log,
      );
    } catch (error) {
      // Deleted meanwhile: the user, a user muted, or a group muted.
      if (!(error instanceof ForeignKeyViolation)) throw error;
      if (error.constraint?.includes('muted_guid')) throw guidNotFound(targets('group')[0] ?? '');
      throw uidNotFound(error.constraint?.includes('muted_uid') ? (targets('oneOnOne')[0] ?? uid) : uid);
    }
    return { success: true };
  }

  /** notifications-push-unmute-conversations: conversations not muted are no matter. */
  async unmute(ctx: RequestContext, rawUid: string, conversations: ReadonlyArray<Omit<MuteInput, 'until'>>): Promise<{ success: true }> {
    const { uid } = await this.deps.users.requireActive(ctx, rawUid);
    await this.deps.mutes.remove(
      ctx.appId,
      uid,
      conversations.map((c) => ({ kind: c.type, target: normalizeId(c.id) })),
    );
    return { success: true };
  }
}
