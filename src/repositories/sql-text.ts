import { CompiledQuery, type RawBuilder } from 'kysely';
import type { Executor } from '../db/transaction.js';

/** A statement of SqlParams.rowsOfEach, made by SqlParams.statementOf. */
export type EachStatement = string & { readonly eachStatement: unique symbol };

/** Shapes of statements (texts and signatures) whose rowsOfEach statement is kept (statementOf). */
const MAX_SHAPES = 1_000;

/**
 * The parameters of a statement written as text, numbered as they are added (`q.p1`, `q.p2`,
 * ...: the columns of one record of values, see rowsOfEach, which runs every such text): for
 * the statement of a history page, which Kysely's query builder took ~150 µs a page to build
 * and compile, a tenth of the page's CPU in the server (docs/performance-log.md, "its statement as text"). Every value goes
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
   * The statement that rowsOfEach runs for `text` with parameters of this signature: the text
   * run once per record of values (see rowsOfEach). Made once per shape (text and signature; at
   * most MAX_SHAPES kept): the same string each time, whose hash (statements of one shape are
   * grouped by it, and it names its prepared statement: database.ts) is computed once. A page's
   * statement is ~3 KB: built anew each time, it was hashed twice a page (~6% of the server's
   * CPU for it); now only its key is, once.
   */
  static statementOf(text: string, params: SqlParams): EachStatement {
    const key = `${params.signature}\u0000${text}`;
    let statement = SqlParams.shapes.get(key);
    if (statement === undefined) {
      const columns = params.types.map((type, i) => `, p${i + 1} ${type}`).join('');
      statement = `select q.n as "#item", x.* from json_to_recordset($1::json) as q(n int${columns})
                   cross join lateral (${text}) as x order by q.n` as EachStatement;
      if (SqlParams.shapes.size < MAX_SHAPES) SqlParams.shapes.set(key, statement);
    }
    return statement;
  }

  private static readonly shapes = new Map<string, EachStatement>();

  /**
   * Runs a text (`statement`, from statementOf with the first item) for each of `items` (each
   * the parameters of one run of the same text, with the same signature) in ONE statement, and
   * answers each item's rows, in the order of `items`. The items' values travel as one JSON
   * array of records (columns p1, p2, ... of the parameters' types); the text runs once per
   * record, as a lateral subquery reading them. So concurrent reads of one shape cost one
   * statement (one round trip, one executor start) instead of one each: for history pages, ~30%
   * less CPU a page, in PostgreSQL and here, at four a statement (docs/performance-log.md, "concurrent pages read by one statement"). One item
   * runs the same way.
   *
   * An item's rows come in the order the text gives them when it answers at most one row (as
   * the page statement does); of a text answering several, in no particular order.
   */
  static async rowsOfEach<Row>(tx: Executor, statement: EachStatement, items: readonly SqlParams[]): Promise<Row[][]> {
    const first = items[0];
    if (!first) return [];
    for (const item of items) if (item.signature !== first.signature) throw new Error('rowsOfEach: items with different parameters');
    const records = items.map((item, n) => {
      const record: Record<string, unknown> = { n };
      item.values.forEach((value, i) => (record[`p${i + 1}`] = value));
      return record;
    });
    const result = await tx.executeQuery<Row & { '#item': number }>(CompiledQuery.raw(statement, [JSON.stringify(records)]));
    const rows: Row[][] = items.map(() => []);
    for (const row of result.rows) rows[row['#item']]!.push(row);
    return rows;
  }
}

/**
 * A statement built with Kysely's `sql` from fragments, compiled ONCE: each run binds its own
 * values into the same text. `build` is called once, with a placeholder for each named value;
 * the placeholders must reach the text only as parameters (`${appId}`), never as literals or
 * inside other strings (checked: each must appear among the compiled parameters, and no other
 * parameter may be built from one). For the coalesced send, whose fragments (its checks, its
 * conversation moves, its events) took ~50 µs to build and compile a statement on a warm core,
 * ~270 µs on one that had been idle for a few milliseconds (docs/performance-log.md, "The send on a machine that slows idle cores"); a text reused
 * as the same string is also hashed once for its prepared statement's name (database.ts).
 */
export class StatementTemplate<Values extends Record<string, unknown>, Row> {
  private readonly text: string;
  /** Per parameter of the compiled text: the value's name, or the constant the fragments gave. */
  private readonly slots: Array<{ name: keyof Values } | { constant: unknown }>;

  constructor(compiler: Executor, names: ReadonlyArray<keyof Values & string>, build: (values: Values) => RawBuilder<Row>) {
    const placeholders = new Map(names.map((name) => [name, { placeholder: name }]));
    const compiled = build(Object.fromEntries(placeholders) as unknown as Values).compile(compiler);
    const byPlaceholder = new Map([...placeholders].map(([name, placeholder]) => [placeholder as unknown, name]));
    this.slots = compiled.parameters.map((parameter) => {
      const name = byPlaceholder.get(parameter);
      if (name !== undefined) return { name };
      if (typeof parameter === 'string' && parameter.includes('[object Object]')) throw new Error('StatementTemplate: a placeholder was used inside a string');
      return { constant: parameter };
    });
    for (const name of names) {
      if (!this.slots.some((slot) => 'name' in slot && slot.name === name)) throw new Error(`StatementTemplate: ${name} is not a parameter of the statement`);
    }
    this.text = compiled.sql;
  }

  /** Runs the statement with these values. */
  async execute(tx: Executor, values: Values): Promise<Row[]> {
    const parameters = this.slots.map((slot) => ('name' in slot ? values[slot.name] : slot.constant));
    return (await tx.executeQuery<Row>(CompiledQuery.raw(this.text, parameters))).rows;
  }
}
