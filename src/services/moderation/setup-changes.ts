import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { withTransaction, type Tx } from '../../db/transaction.js';
import type { RequestContext } from '../../domain/context.js';
import type { ModerationSetupRepository } from '../../repositories/moderation/setup.repository.js';

/**
 * A change to an app's moderation set-up (its rules, keyword lists or hook), written once for all
 * of them: one transaction that first moves the app's moderation version (its row lock also makes
 * the app's moderation writes take turns, so limits and ids hold under concurrent requests), then,
 * once it has committed, `changed` (the composition root drops this node's compiled set-up of the
 * app and tells the other nodes: services/moderation/setups.ts). A change that throws moves nothing.
 */
export class SetupChanges {
  constructor(private readonly deps: { db: Kysely<DB>; setup: Pick<ModerationSetupRepository, 'bump'>; changed: (appId: string) => void }) {}

  async run<T>(ctx: RequestContext, name: string, work: (tx: Tx) => Promise<T>): Promise<T> {
    const result = await withTransaction(
      this.deps.db,
      name,
      async (tx) => {
        await this.deps.setup.bump(ctx.appId, tx);
        return work(tx);
      },
      ctx.log,
    );
    this.deps.changed(ctx.appId);
    return result;
  }
}
