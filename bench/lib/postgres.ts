import crypto from 'node:crypto';
import pg from 'pg';

/** The bench's PostgreSQL: whether it answers, and a fresh database per scenario, dropped after it. */
export function postgresDatabases(adminUrl: string) {
  return {
    async postgresReachable(): Promise<boolean> {
      const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 2000 });
      try {
        await client.connect();
        await client.end();
        return true;
      } catch {
        return false;
      }
    },
    async withPostgresDatabase<T>(run: (url: string) => Promise<T>): Promise<T> {
      const name = `parley_bench_${crypto.randomBytes(4).toString('hex')}`;
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      await admin.query(`create database ${name}`);
      try {
        const url = new URL(adminUrl);
        url.pathname = `/${name}`;
        return await run(url.toString());
      } finally {
        await admin.query(`drop database if exists ${name} with (force)`);
        await admin.end();
      }
    },
  };
}
