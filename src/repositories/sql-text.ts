import { CompiledQuery } from 'kysely';
import type { Executor } from '../db/transaction.js';

/**
 * The parameters of a statement written as text, numbered as they are added (`$1`, `$2`, ...):
 * for the statement of a history page, which Kysely's query builder took ~150 µs a page to
 * build and compile, a tenth of the page's CPU in the server (docs/performance.md). Every
 * value goes in through `param`; the text around it is the caller's literals.
 */
export class SqlParams {
  private readonly values: unknown[] = [];

  /** `$n` for the value, now the n-th parameter. */
  param(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  /** `$n::type` for the value: a parameter with its type named, as for arrays. */
  typed(value: unknown, type: string): string {
    return `${this.param(value)}::${type}`;
  }

  /**
   * `typed` for a value the text may use several times, or not at all: the parameter is added
   * at its first use and reused after, since PostgreSQL cannot type a parameter it never sees.
   */
  shared(value: unknown, type: string): () => string {
    let ref: string | undefined;
    return () => (ref ??= this.typed(value, type));
  }

  /** Runs `text` (written with these parameters) as one statement, through the executor's driver. */
  async rows<Row>(tx: Executor, text: string): Promise<Row[]> {
    return (await tx.executeQuery<Row>(CompiledQuery.raw(text, this.values))).rows;
  }
}
