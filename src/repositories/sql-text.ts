import { CompiledQuery } from 'kysely';
import type { Executor } from '../db/transaction.js';

/**
 * The parameters of a statement written as text, numbered as they are added (`q.p1`, `q.p2`,
 * ...: the columns of one record of values, see rowsOfEach, which runs every such text): for
 * the statement of a history page, which Kysely's query builder took ~150 µs a page to build
 * and compile, a tenth of the page's CPU in the server (docs/performance.md). Every value goes
 * in through `param` or `typed`; the text around it is the caller's literals.
 */
export class SqlParams {
  private readonly values: unknown[] = [];
  private readonly types: string[] = [];

  /** `q.pn` for a text (or null) or a timestamp, now the n-th parameter. */
  param(value: string | Date | null): string {
    return this.add(value, value instanceof Date ? 'timestamptz' : 'text');
  }

  /** `q.pn` for a value of this type, as for arrays. */
  typed(value: unknown, type: string): string {
    return this.add(value, type);
  }

  /**
   * `typed` for a value the text may use several times, or not at all: the parameter is added
   * at its first use and reused after, so a statement carries it once, and only when it uses it.
   */
  shared(value: unknown, type: string): () => string {
    let ref: string | undefined;
    return () => (ref ??= this.typed(value, type));
  }

  /** The parameters' types in order: statements of the same text and signature run together (rowsOfEach). */
  get signature(): string {
    return this.types.join(',');
  }

  private add(value: unknown, type: string): string {
    if (!/^[a-z_][a-z0-9_ ]*(\[\])?$/.test(type)) throw new Error(`not a plain type: ${type}`);
    this.values.push(value);
    this.types.push(type);
    return `q.p${this.values.length}`;
  }

  /**
   * Runs `text` for each of `items` (each the parameters of one run of the same text, with the
   * same signature) in ONE statement, and answers each item's rows, in the order of `items`.
   * The items' values travel as one JSON array of records (columns p1, p2, ... of the
   * parameters' types); the text runs once per record, as a lateral subquery reading them. So
   * concurrent reads of one shape cost one statement (one round trip, one executor start)
   * instead of one each: for history pages, ~30% less CPU a page, in PostgreSQL and here, at
   * four a statement (docs/performance.md). One item runs the same way.
   *
   * An item's rows come in the order the text gives them when it answers at most one row (as
   * the page statement does); of a text answering several, in no particular order.
   */
  static async rowsOfEach<Row>(tx: Executor, text: string, items: readonly SqlParams[]): Promise<Row[][]> {
    const first = items[0];
    if (!first) return [];
    for (const item of items) if (item.signature !== first.signature) throw new Error('rowsOfEach: items with different parameters');
    const columns = first.types.map((type, i) => `, p${i + 1} ${type}`).join('');
    const records = items.map((item, n) => {
      const record: Record<string, unknown> = { n };
      item.values.forEach((value, i) => (record[`p${i + 1}`] = value));
      return record;
    });
    const statement = `select q.n as "#item", x.* from json_to_recordset($1::json) as q(n int${columns})
                       cross join lateral (${text}) as x order by q.n`;
    const result = await tx.executeQuery<Row & { '#item': number }>(CompiledQuery.raw(statement, [JSON.stringify(records)]));
    const rows: Row[][] = items.map(() => []);
    for (const row of result.rows) rows[row['#item']]!.push(row);
    return rows;
  }
}
