import { sql, type Selectable } from 'kysely';
import type { ModerationKeywordListsTable } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { jsonRowCodec } from '../json-rows.js';

/**
 * An app's keyword lists (migration 0018): its own and its versions of built-in lists
 * (domain/moderation/defaults.ts), and the tombstones of the built-in lists it deleted.
 */
export type KeywordListRow = Selectable<ModerationKeywordListsTable>;

/** A list's row read inside a larger statement (setup.repository.ts). */
export const KEYWORD_LIST_ROW = jsonRowCodec<KeywordListRow>({
  app_id: 'value',
  id: 'value',
  revision: 'value',
  name: 'value',
  description: 'value',
  category: 'value',
  is_csv: 'value',
  search_terms: 'value',
  created_at: 'timestamp',
  updated_at: 'timestamp',
});

/** What the rules and limits need of a list: not its terms. */
export interface KeywordListSummary {
  id: string;
  category: 'word' | 'pattern';
  terms: number;
}

export interface KeywordListWrite {
  id: string;
  revision: number;
  name: string;
  description: string | null;
  category: 'word' | 'pattern';
  isCsv: boolean;
  searchTerms: string[];
  createdAt: Date;
  updatedAt: Date;
}

export class KeywordListsRepository {
  constructor(private readonly db: Executor) {}

  /** The app's row for the list (if any), and whether the app deleted the built-in list of this id. */
  async get(appId: string, id: string, tx: Executor = this.db): Promise<{ row: KeywordListRow | undefined; deleted: boolean }> {
    const result = await sql<KeywordListRow & { deleted: boolean; found: boolean }>`
      select l.*, l.id is not null as found,
        exists (select 1 from moderation_deleted_defaults d where d.app_id = ${appId} and d.kind = 'list' and d.id = ${id}) as deleted
      from (select 1) k
      left join moderation_keyword_lists l on l.app_id = ${appId} and l.id = ${id}`.execute(tx);
    const { deleted, found, ...list } = result.rows[0]!;
    return { row: found ? (list as KeywordListRow) : undefined, deleted };
  }

  /** Every list of the app, and the ids of the built-in lists it deleted. */
  async list(appId: string, tx: Executor = this.db): Promise<{ rows: KeywordListRow[]; deleted: Set<string> }> {
    const [rows, deleted] = await Promise.all([tx.selectFrom('moderation_keyword_lists').selectAll().where('app_id', '=', appId).orderBy('id').execute(), this.deleted(appId, tx)]);
    return { rows, deleted };
  }

  /** Id, category and number of terms of every list of the app (terms not read), and the built-in lists it deleted. */
  async summaries(appId: string, tx: Executor = this.db): Promise<{ rows: KeywordListSummary[]; deleted: Set<string> }> {
    const [rows, deleted] = await Promise.all([
      tx
        .selectFrom('moderation_keyword_lists')
        .select(['id', 'category', sql<number>`cardinality(search_terms)`.as('terms')])
        .where('app_id', '=', appId)
        .orderBy('id')
        .execute(),
      this.deleted(appId, tx),
    ]);
    return { rows: rows.map((row) => ({ id: row.id, category: row.category, terms: Number(row.terms) })), deleted };
  }

  private async deleted(appId: string, tx: Executor): Promise<Set<string>> {
    const rows = await tx.selectFrom('moderation_deleted_defaults').select('id').where('app_id', '=', appId).where('kind', '=', 'list').execute();
    return new Set(rows.map((row) => row.id));
  }

  /**
   * Writes the list: with `replace`, a new row or the next revision of its row; without, a new
   * row only (an existing id rejects with UniqueViolation).
   */
  async save(appId: string, list: KeywordListWrite, options: { replace: boolean }, tx: Executor): Promise<KeywordListRow> {
    const terms = sql<string[]>`${list.searchTerms}::text[]`;
    const insert = tx.insertInto('moderation_keyword_lists').values({
      app_id: appId,
      id: list.id,
      revision: list.revision,
      name: list.name,
      description: list.description,
      category: list.category,
      is_csv: list.isCsv,
      search_terms: terms,
      created_at: list.createdAt,
      updated_at: list.updatedAt,
    });
    const write = options.replace
      ? insert.onConflict((oc) =>
          oc.columns(['app_id', 'id']).doUpdateSet({
            revision: list.revision,
            name: list.name,
            description: list.description,
            category: list.category,
            is_csv: list.isCsv,
            search_terms: terms,
            updated_at: list.updatedAt,
          }),
        )
      : insert;
    return write.returningAll().executeTakeFirstOrThrow();
  }

  /** Deletes the app's row of the list; whether there was one. */
  async delete(appId: string, id: string, tx: Executor): Promise<boolean> {
    const result = await tx.deleteFrom('moderation_keyword_lists').where('app_id', '=', appId).where('id', '=', id).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** Marks the built-in list `id` deleted for the app. */
  async tombstone(appId: string, id: string, tx: Executor): Promise<void> {
    await tx
      .insertInto('moderation_deleted_defaults')
      .values({ app_id: appId, kind: 'list', id, deleted_at: new Date() })
      .onConflict((oc) => oc.columns(['app_id', 'kind', 'id']).doNothing())
      .execute();
  }
}
