import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';

/**
 * An executor on one PostgreSQL connection whose statements' plans, nested ones too, are
 * logged by auto_explain (with their row counts) and sent to this client as notices, collected
 * in `plans`. For tests that hold a statement to its plan (PostgreSQL only).
 */
export async function explainingExecutor(url: string): Promise<{ db: Kysely<any>; plans: string[]; close(): Promise<void> }> {
  const plans: string[] = [];
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  pool.on('connect', (client) => client.on('notice', (notice) => plans.push(notice.message ?? '')));
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
  await sql`load 'auto_explain'`.execute(db);
  await sql`set auto_explain.log_min_duration = 0`.execute(db);
  await sql`set auto_explain.log_analyze = on`.execute(db);
  await sql`set auto_explain.log_nested_statements = on`.execute(db);
  await sql`set client_min_messages = log`.execute(db);
  return { db, plans, close: () => db.destroy() };
}

/**
 * The indexes (or scan kinds) of the scans of `relation` (as the plan names it: `messages`,
 * `messages um`) that ran in this plan, leaving out those never executed.
 */
export function scansRun(plan: string, relation: string): string[] {
  const on = new RegExp(` on ${relation}\\b`);
  return plan
    .split('\n')
    .filter((line) => on.test(line) && !line.includes('(never executed)'))
    .map((line) => /using (\w+)/.exec(line)?.[1] ?? line.trim());
}
