// Soak: mixed traffic against one server for a long while (sends 1:1 and to groups, history
// pages, user reads, data import calls), with the server's RSS reported each minute. Memory
// that grows with the requests served (a leak, a cache without bound) shows as a slope.
//
//   tsx bench/soak.ts [--engine postgres|pglite] [--minutes 20] [--rate 1500]
// (npm run bench runs it too, with its --engine and --only "soak"; --soak-minutes sets its length).
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { postgresDatabases } from './lib/postgres.js';
import { startServerProcess } from './lib/processes.js';

export interface SoakMinute {
  minute: number;
  rssMb: number;
  requests: number;
  non2xx: number;
  errors: number;
  imported: number;
}

export interface SoakResult {
  engine: string;
  minutes: SoakMinute[];
  /** Mean RSS of the last third of the run against that of its second third, in percent. */
  growthPercent: number;
}

const USERS = 4_000;

export async function soak(options: { engine: 'postgres' | 'pglite'; databaseUrl?: string; minutes: number; rate: number; log?: (line: string) => void }): Promise<SoakResult> {
  const log = options.log ?? console.log;
  const server = await startServerProcess<{ port: number; appId: string; apiKey: string; chatGroups: number }>('parley-server.ts', {
    BENCH_ENGINE: options.engine,
    ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
    BENCH_USERS: String(USERS),
    BENCH_HISTORY: '',
  });
  const base = `http://127.0.0.1:${server.info.port}`;
  const headers = { appid: server.info.appId, apikey: server.info.apiKey, 'content-type': 'application/json' };
  const groups = server.info.chatGroups;
  let i = 0;
  const text = JSON.stringify({ category: 'message', type: 'text', data: { text: 'Soak message' } }).slice(1);
  // One request in a mix: of every 10, 4 sends (3 to users, 1 to a group), 4 history pages, 2 user reads.
  const mixed = (request: any) => {
    const n = i++;
    const pair = n % 2000;
    switch (n % 10) {
      case 0:
      case 1:
      case 2:
        return {
          ...request,
          method: 'POST',
          path: '/v3/messages',
          headers: { ...request.headers, onbehalfof: `seed-${pair * 2}` },
          body: `{"receiver":"seed-${pair * 2 + 1}","receiverType":"user",${text}`,
        };
      case 3: {
        const group = n % groups;
        return {
          ...request,
          method: 'POST',
          path: '/v3/messages',
          headers: { ...request.headers, onbehalfof: `seed-${group * 10 + (n % 10)}` },
          body: `{"receiver":"chat-${group}","receiverType":"group",${text}`,
        };
      }
      case 4:
      case 5:
      case 6:
      case 7:
        return { ...request, method: 'GET', path: `/v3/users/seed-${pair * 2 + 1}/messages?limit=50`, headers: { ...request.headers, onbehalfof: `seed-${pair * 2}` }, body: undefined };
      default:
        return { ...request, method: 'GET', path: `/v3/users/seed-${n % USERS}`, body: undefined };
    }
  };
  const minutes: SoakMinute[] = [];
  let imported = 0;
  let importing = true;
  // Data import calls of 1,000 messages, one every 2 s, through the run.
  const importer = (async () => {
    let call = 0;
    while (importing) {
      const next = Date.now() + 2000;
      const records: Record<string, unknown> = {};
      const sentAt = Math.floor(Date.now() / 1000) - 3600;
      for (let k = 0; k < 1000; k++) {
        const muid = `soak-${call}-${k}`;
        records[muid] = { muid, sender: `seed-${k * 2}`, receiverType: 'user', receiver: `seed-${k * 2 + 1}`, category: 'message', type: 'text', data: { text: `Imported ${muid}` }, sentAt };
      }
      call++;
      const status = await post(server.info.port, headers, JSON.stringify({ messages: records }));
      if (status === 200) imported += 1000;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - Date.now())));
    }
  })();
  try {
    for (let minute = 1; minute <= options.minutes; minute++) {
      const before = imported;
      const result = await autocannon({ url: base, connections: 32, duration: 60, overallRate: options.rate, headers, requests: [{ setupRequest: mixed }] });
      const row = { minute, rssMb: server.rssMb(), requests: result.requests.total, non2xx: result.non2xx, errors: result.errors + result.timeouts, imported: imported - before };
      minutes.push(row);
      log(
        `soak ${options.engine} minute ${String(minute).padStart(2)}: RSS ${row.rssMb} MB, ${row.requests} requests (${row.non2xx} non-2xx, ${row.errors} errors), ${row.imported} messages imported`,
      );
    }
  } finally {
    importing = false;
    await importer;
    await server.stop();
  }
  const mean = (rows: SoakMinute[]) => rows.reduce((sum, row) => sum + row.rssMb, 0) / Math.max(1, rows.length);
  const third = Math.floor(minutes.length / 3);
  const growthPercent = third > 0 ? Math.round((mean(minutes.slice(-third)) / mean(minutes.slice(third, 2 * third)) - 1) * 1000) / 10 : 0;
  return { engine: options.engine, minutes, growthPercent };
}

function post(port: number, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve) => {
    const request = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/v3/data_import/messages', headers }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', () => resolve(0));
    request.end(body);
  });
}

export function describe(result: SoakResult): string {
  const rss = result.minutes.map((row) => row.rssMb);
  const requests = result.minutes.reduce((sum, row) => sum + row.requests, 0);
  const failed = result.minutes.reduce((sum, row) => sum + row.non2xx + row.errors, 0);
  return (
    `soak ${result.engine}: ${result.minutes.length} min, ${requests} requests (${failed} not 2xx), ` +
    `RSS ${Math.min(...rss)}–${Math.max(...rss)} MB, last third vs second third ${result.growthPercent >= 0 ? '+' : ''}${result.growthPercent}%`
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { engine: { type: 'string', default: 'pglite' }, minutes: { type: 'string', default: '20' }, rate: { type: 'string', default: '1500' } } });
  const engine = values.engine as 'postgres' | 'pglite';
  const options = { engine, minutes: Number(values.minutes), rate: Number(values.rate) };
  const databases = postgresDatabases(process.env.PARLEY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  const result = engine === 'postgres' ? await databases.withPostgresDatabase((databaseUrl) => soak({ ...options, databaseUrl })) : await soak(options);
  console.log(describe(result));
}
