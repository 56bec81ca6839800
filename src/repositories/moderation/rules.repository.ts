import { sql, type Selectable } from 'kysely';
import type { ModerationRuleRevisionsTable, ModerationRulesTable } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { jsonRowCodec } from '../json-rows.js';

/**
 * An app's moderation rules (migration 0018): its own rules and its versions of built-in rules
 * (domain/moderation/defaults.ts), each with every revision it had, and the tombstones of the
 * built-in rules it deleted.
 */
export type RuleRow = Selectable<ModerationRulesTable>;
export type RuleRevisionRow = Selectable<ModerationRuleRevisionsTable>;

/** A rule's row read inside a larger statement (setup.repository.ts). */
export const RULE_ROW = jsonRowCodec<RuleRow>({
  app_id: 'value',
  id: 'value',
  revision: 'value',
  name: 'value',
  description: 'value',
  enabled: 'value',
  conditions: 'value',
  action: 'value',
  created_at: 'timestamp',
  updated_at: 'timestamp',
});

/** A rule as written: its conditions and actions already serialised, and the revision's copy of it. */
export interface RuleWrite {
  id: string;
  revision: number;
  name: string;
  description: string | null;
  enabled: boolean;
  conditionsJson: string;
  actionJson: string;
  createdAt: Date;
  updatedAt: Date;
  /** The rule as it is at this revision (a JSON object), kept in moderation_rule_revisions. */
  revisionJson: string;
}

export class ModerationRulesRepository {
  constructor(private readonly db: Executor) {}

  /** The app's row for the rule (if any), and whether the app deleted the built-in rule of this id. */
  async get(appId: string, id: string, tx: Executor = this.db): Promise<{ row: RuleRow | undefined; deleted: boolean }> {
    const result = await sql<RuleRow & { deleted: boolean; found: boolean }>`
      select r.*, r.id is not null as found,
        exists (select 1 from moderation_deleted_defaults d where d.app_id = ${appId} and d.kind = 'rule' and d.id = ${id}) as deleted
      from (select 1) k
      left join moderation_rules r on r.app_id = ${appId} and r.id = ${id}`.execute(tx);
    const row = result.rows[0]!;
    const { deleted, found, ...rule } = row;
    return { row: found ? (rule as RuleRow) : undefined, deleted };
  }

  /** Every row of the app, and the ids of the built-in rules it deleted. */
  async list(appId: string, tx: Executor = this.db): Promise<{ rows: RuleRow[]; deleted: Set<string> }> {
    const [rows, deleted] = await Promise.all([
      tx.selectFrom('moderation_rules').selectAll().where('app_id', '=', appId).orderBy('id').execute(),
      tx.selectFrom('moderation_deleted_defaults').select('id').where('app_id', '=', appId).where('kind', '=', 'rule').execute(),
    ]);
    return { rows, deleted: new Set(deleted.map((row) => row.id)) };
  }

  /**
   * Writes the rule and its revision: with `replace`, a new row or the next revision of its row;
   * without, a new row only (an existing id rejects with UniqueViolation).
   */
  async save(appId: string, rule: RuleWrite, options: { replace: boolean }, tx: Executor): Promise<RuleRow> {
    const insert = tx.insertInto('moderation_rules').values({
      app_id: appId,
      id: rule.id,
      revision: rule.revision,
      name: rule.name,
      description: rule.description,
      enabled: rule.enabled,
      conditions: rule.conditionsJson,
      action: rule.actionJson,
      created_at: rule.createdAt,
      updated_at: rule.updatedAt,
    });
    const write = options.replace
      ? insert.onConflict((oc) =>
          oc.columns(['app_id', 'id']).doUpdateSet({
            revision: rule.revision,
            name: rule.name,
            description: rule.description,
            enabled: rule.enabled,
            conditions: rule.conditionsJson,
            action: rule.actionJson,
            updated_at: rule.updatedAt,
          }),
        )
      : insert;
    const row = await write.returningAll().executeTakeFirstOrThrow();
    await tx.insertInto('moderation_rule_revisions').values({ app_id: appId, rule_id: rule.id, revision: rule.revision, rule: rule.revisionJson, created_at: rule.updatedAt }).execute();
    return row;
  }

  /** Deletes the app's row of the rule with its revisions; whether there was one. */
  async delete(appId: string, id: string, tx: Executor): Promise<boolean> {
    await tx.deleteFrom('moderation_rule_revisions').where('app_id', '=', appId).where('rule_id', '=', id).execute();
    const result = await tx.deleteFrom('moderation_rules').where('app_id', '=', appId).where('id', '=', id).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** Marks the built-in rule `id` deleted for the app. */
  async tombstone(appId: string, id: string, tx: Executor): Promise<void> {
    await tx
      .insertInto('moderation_deleted_defaults')
      .values({ app_id: appId, kind: 'rule', id, deleted_at: new Date() })
      .onConflict((oc) => oc.columns(['app_id', 'kind', 'id']).doNothing())
      .execute();
  }

  /** The rule's revisions, newest first, from `offset`. */
  async revisions(appId: string, id: string, page: { offset: number; limit: number }, tx: Executor = this.db): Promise<RuleRevisionRow[]> {
    return tx.selectFrom('moderation_rule_revisions').selectAll().where('app_id', '=', appId).where('rule_id', '=', id).orderBy('revision', 'desc').limit(page.limit).offset(page.offset).execute();
  }

  async countRevisions(appId: string, id: string, tx: Executor = this.db): Promise<number> {
    const row = await tx
      .selectFrom('moderation_rule_revisions')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('app_id', '=', appId)
      .where('rule_id', '=', id)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
