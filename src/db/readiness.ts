import { sql } from 'kysely';
import type { Database } from './database.js';
import { loadMigrations } from './migrate.js';

/** How long the readiness probe's statement may take before the node counts as not ready. */
const PROBE_MS = 2_000;

/**
 * The database side of readiness (GET /readyz, docs/deployment.md): a function that answers
 * undefined when the database answers and has every migration this Parley knows applied, else
 * why not. The migrations are counted once; each probe is one statement, bounded by PROBE_MS (a
 * pool whose connections are all taken is not ready either).
 */
export function databaseReadiness(database: Database, known = loadMigrations().length): () => Promise<string | undefined> {
  return async () => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), PROBE_MS)));
    try {
      const probe = sql<{ newest: number | null }>`select max(version) as newest from parley_migrations`.execute(database.db);
      probe.catch(() => undefined);
      const answer = await Promise.race([probe, late]);
      if (answer === 'late') return `the database did not answer within ${PROBE_MS} ms`;
      const newest = Number(answer.rows[0]?.newest ?? 0);
      return newest < known ? `migrations pending: the database is at ${newest} of ${known}` : undefined;
    } catch {
      return 'the database does not answer';
    } finally {
      clearTimeout(timer);
    }
  };
}
