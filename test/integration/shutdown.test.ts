/**
 * Shutdown keeps the database open for handlers whose clients hung up: closing the server waits
 * for open sockets only, so without waiting for running handlers their queries would fail on a
 * closed database. A long data import is sent, its client hangs up, and the server is closed at
 * once; the import must still have stored every record, with nothing logged as failed.
 * (It fails without the wait on PostgreSQL; the embedded engine's close already waits for the
 * queries queued on its one session.)
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { pino } from 'pino';
import { openDatabase } from '../../src/db/database.js';
import { silentLogger } from '../../src/domain/context.js';
import { startServer } from '../../src/server.js';
import { serverDeployment } from '../helpers/db.js';

const RECORDS = 5_000;
const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('shutdown', () => {
  it('lets a handler whose client hung up finish before closing the database', async () => {
    // This test is about waiting for handlers; the bound on that wait is timeouts.test.ts's.
    const { config, dataDir, url } = await serverDeployment('parley-shutdown', { PARLEY_SHUTDOWN_GRACE_MS: '300000' }, cleanups);
    const lines: string[] = [];
    const log = pino({ level: 'info' }, new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }));
    const server = await startServer(config, log);
    const app = server.defaultApp!;

    const users = Object.fromEntries(Array.from({ length: RECORDS }, (_, i) => [`leaver-${i}`, { uid: `leaver-${i}`, name: `Leaver ${i}` }]));
    const payload = JSON.stringify({ users });
    const request = http.request({
      host: '127.0.0.1',
      port: server.port,
      method: 'POST',
      path: '/v3/data_import/users',
      headers: { appid: app.appId, apikey: app.apiKey, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
    });
    request.on('error', () => {});
    request.end(payload);
    // Once the import is under way (its first rows are in), the client hangs up and the server
    // is told to stop.
    for (let stored = 0; stored === 0; ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      stored = Number(
        (
          await server.database.db
            .selectFrom('users')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('app_id', '=', app.appId)
            .where('uid', 'like', 'leaver-%')
            .executeTakeFirstOrThrow()
        ).n,
      );
    }
    request.destroy();
    await server.close();

    const database = url ? await openDatabase({ engine: 'postgres', url, log: silentLogger }) : await openDatabase({ engine: 'pglite', dataDir, log: silentLogger });
    try {
      const row = await database.db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('app_id', '=', app.appId)
        .where('uid', 'like', 'leaver-%')
        .executeTakeFirstOrThrow();
      assert.equal(Number(row.n), RECORDS, 'the import finished');
    } finally {
      await database.close();
    }
    const failures = lines.filter((line) => /"level":(50|60)/.test(line));
    assert.deepEqual(failures, [], 'nothing failed');
  });
});
