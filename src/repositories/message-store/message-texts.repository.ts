import { sql } from 'kysely';
import type { Executor } from '../../db/transaction.js';
import type { MessageRow } from '../messages.repository.js';

/** A message's key: the primary key of `messages`. */
export interface MessageKey {
  appId: string;
  id: string;
}

/** A message read without a stored text, with the version of its row when read. */
export interface UntextedMessage {
  row: MessageRow;
  /** The row's version (xmin) when read: its text is stored only while the row is still that version. */
  rowVersion: string;
}

/** A stored text for a message read by `scan`. */
export interface MessageText extends MessageKey {
  rowVersion: string;
  shown: string;
}

/**
 * Stored message texts (messages.shown, migration 0017) given to the messages stored without
 * one: before 0017, or by a path that kept none (services/message-text-backfill.ts). Every app's
 * messages in key order, a bounded batch a statement.
 */
export class MessageTextsRepository {
  constructor(private readonly db: Executor) {}

  /**
   * The `limit` messages after `after` in key order (of every app): how many were read, the key
   * of the last, and those of them without a stored text. None read: the end of the table.
   */
  async scan(after: MessageKey | undefined, limit: number): Promise<{ read: number; last: MessageKey | undefined; untexted: UntextedMessage[] }> {
    // The limit as a literal (as a page's: see message-page-query.ts): with a parameter there, a
    // prepared statement's generic plan is costed for a tenth of the table, and could read it
    // all and sort it instead of reading the key from the cursor.
    if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`not a batch size: ${limit}`);
    const from = after === undefined ? sql`true` : sql`(m.app_id, m.id) > (${after.appId}, ${after.id}::bigint)`;
    const { rows } = await sql<MessageRow & { shown: string | null; row_version: string; read: string; is_last: boolean }>`
      with scanned as (
        select m.*, m.xmin::text as row_version from messages m where ${from} order by m.app_id, m.id limit ${sql.lit(limit)}
      ), last as (
        select app_id, id from scanned order by app_id desc, id desc limit 1
      )
      select s.*, (select count(*) from scanned) as read, (s.app_id, s.id) = (select app_id, id from last) as is_last
      from scanned s
      where s.shown is null or (s.app_id, s.id) = (select app_id, id from last)
      order by s.app_id, s.id`.execute(this.db);
    const lastRow = rows.find((row) => row.is_last);
    return {
      read: rows.length === 0 ? 0 : Number(rows[0]!.read),
      last: lastRow ? { appId: lastRow.app_id, id: String(lastRow.id) } : undefined,
      untexted: rows.filter((row) => row.shown === null).map(({ shown: _shown, row_version, read: _read, is_last: _last, ...row }) => ({ row, rowVersion: row_version })),
    };
  }

  /**
   * Stores each text on its message, if the row is still the version it was read at and still
   * has no text (a message changed since keeps none: the trigger of migration 0017 would have
   * dropped a text it had). Answers how many were stored.
   */
  async store(texts: MessageText[], tx: Executor = this.db): Promise<number> {
    if (texts.length === 0) return 0;
    const records = JSON.stringify(texts.map((text) => ({ app_id: text.appId, id: text.id, row_version: text.rowVersion, shown: text.shown })));
    const result = await sql`
      update messages m set shown = r.shown
      from json_to_recordset(${records}::json) as r(app_id text, id bigint, row_version text, shown text)
      where m.app_id = r.app_id and m.id = r.id and m.xmin::text = r.row_version and m.shown is null`.execute(tx);
    return Number(result.numAffectedRows ?? 0n);
  }
}
