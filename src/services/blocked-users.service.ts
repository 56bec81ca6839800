import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { withTransaction, type Tx } from '../db/transaction.js';
import type { RequestContext } from '../domain/context.js';
import { userConversationWireId } from '../domain/conversation-id.js';
import { AppError, uidFailure } from '../domain/errors.js';
import { normalizeId, normalizeIds } from '../domain/normalize.js';
import { extended } from '../domain/objects.js';
import { pageMeta, type PageMeta, type PageRequest } from '../domain/pagination.js';
import type { BlockDirection, BlockedUsersRepository } from '../repositories/blocked-users.repository.js';
import type { UsersRepository } from '../repositories/users.repository.js';
import type { RelatedUser, RelationResult } from './friends.service.js';
import type { ActorContext } from './actor.js';
import { uidNotFound, type UsersService } from './users.service.js';
import { toUser, withBlockFields } from './views/users.view.js';
import type { EventsRepository } from '../repositories/events.repository.js';
import { blockEvent } from './views/events.view.js';

export class BlockedUsersService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      blocks: BlockedUsersRepository;
      users: UsersRepository;
      usersService: Pick<UsersService, 'requireActive'>;
      events: EventsRepository;
    },
  ) {}

  /** block-users: answers per uid; blocking a blocked user succeeds and keeps the first block's time. */
  async block(ctx: ActorContext, rawUid: string, rawOthers: string[]): Promise<Record<string, RelationResult>> {
    return this.change(ctx, 'block_users', rawUid, rawOthers, async (uid, others, tx) => {
      await this.recordEvent(ctx, 'user_blocked', uid, await this.deps.blocks.addMany(ctx.appId, uid, others, tx), tx);
      return (other) => `The user with UID ${uid} has blocked user with UID ${other} successfully.`;
    });
  }

  /** unblock-users: answers per uid; unblocking a user who is not blocked succeeds. */
  async unblock(ctx: ActorContext, rawUid: string, rawOthers: string[]): Promise<Record<string, RelationResult>> {
    return this.change(ctx, 'unblock_users', rawUid, rawOthers, async (uid, others, tx) => {
      await this.recordEvent(ctx, 'user_unblocked', uid, await this.deps.blocks.removeMany(ctx.appId, uid, others, tx), tx);
      return (other) => `The user with UID ${uid} has unblocked user with UID ${other} successfully.`;
    });
  }

  /** The event of a block or unblock that changed something: the users it changed, and by whom. */
  private async recordEvent(ctx: RequestContext, trigger: 'user_blocked' | 'user_unblocked', uid: string, changed: string[], tx: Tx): Promise<void> {
    if (changed.length === 0) return;
    const rows = new Map((await this.deps.users.getMany(ctx.appId, [uid, ...changed], tx)).map((row) => [row.uid, row]));
    await this.deps.events.record(
      ctx.appId,
      [
        blockEvent(
          trigger,
          rows.get(uid)!,
          changed.map((other) => rows.get(other)!),
        ),
      ],
      tx,
    );
  }

  /** The shared steps of block and unblock: checks each uid, applies `write` to the valid ones. */
  private async change(
    ctx: ActorContext,
    name: string,
    rawUid: string,
    rawOthers: string[],
    write: (uid: string, others: string[], tx: Tx) => Promise<(other: string) => string>,
  ): Promise<Record<string, RelationResult>> {
    const uid = normalizeId(rawUid);
    const others = normalizeIds(rawOthers);
    return withTransaction(
      this.deps.db,
      name,
      async (tx) => {
        // Keeps the users from being deleted before the write (their foreign keys would fail it).
        const active = await this.deps.users.lockActive(ctx.appId, [uid, ...others], 'keyShare', tx);
        if (!active.has(uid)) throw uidNotFound(uid);
        const valid = others.filter((other) => other !== uid && active.has(other));
        const message = await write(uid, valid, tx);
        const results: Record<string, RelationResult> = {};
        for (const other of others) {
          if (other === uid) results[other] = uidFailure(new AppError('ERR_CANNOT_BLOCK_SELF', { params: { uid } }));
          else if (!active.has(other)) results[other] = uidFailure(uidNotFound(other));
          else results[other] = { success: true, message: message(other) };
        }
        return results;
      },
      ctx.log,
    );
  }

  async list(ctx: ActorContext, rawUid: string, input: PageRequest & { direction: BlockDirection; searchKey?: string }): Promise<{ data: RelatedUser[]; meta: PageMeta }> {
    const { uid } = await this.deps.usersService.requireActive(ctx, rawUid);
    const page = { page: input.page, perPage: input.perPage };
    const { rows, total } = await this.deps.blocks.list(ctx.appId, uid, { direction: input.direction, searchKey: input.searchKey }, page);
    const relations = await this.deps.blocks.relations(
      ctx.appId,
      uid,
      rows.map((row) => row.uid),
    );
    return {
      data: rows.map((row) => extended(withBlockFields(toUser(row, { withTags: false }), relations.get(row.uid)), { conversationId: userConversationWireId(uid, row.uid) })),
      meta: pageMeta(page, total, rows.length),
    };
  }
}
