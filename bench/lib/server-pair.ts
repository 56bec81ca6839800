// Two bench servers of this tree that differ by their environment (bench/parley-server.ts), each
// on a fresh PostgreSQL database seeded alike, for an A/B whose servers take the send load in
// turns (lib/side-by-side.ts): hardening-ab.ts (BENCH_WITHOUT) and moderation-ab.ts
// (BENCH_MODERATION). Both are stopped, and their databases dropped, whatever happens.
import { runLoad } from './load.js';
import { postgresCpuMeter, startServerProcess } from './processes.js';
import { sendScenarios } from './send-load.js';

export type PairInfo = { port: number; appId: string; apiKey: string; chatGroups: number };
export type PairServer = Awaited<ReturnType<typeof startServerProcess<PairInfo>>>;

export interface PairOptions {
  withPostgresDatabase: <T>(run: (url: string) => Promise<T>) => Promise<T>;
  users: number;
  connections: number;
  sliceSeconds: number;
}

/** A pair side: its server, the URL of its database, and its send scenarios (its and PostgreSQL's CPU measured). */
export interface PairSide {
  server: PairServer;
  url: string;
  scenarios: ReturnType<typeof sendScenarios>;
}

/** Runs `run` with the server started with `env.with` and the one started with `env.without`. */
export async function withServerPair<T>(
  options: PairOptions,
  env: { with: Record<string, string>; without: Record<string, string> },
  run: (pair: { with: PairSide; without: PairSide }) => Promise<T>,
): Promise<T> {
  const start = (url: string, extra: Record<string, string>) =>
    startServerProcess<PairInfo>('parley-server.ts', { BENCH_ENGINE: 'postgres', DATABASE_URL: url, BENCH_USERS: String(options.users), BENCH_HISTORY: '', ...extra });
  const side = (server: PairServer, url: string): PairSide => {
    const target = { base: `http://127.0.0.1:${server.info.port}`, headers: { appid: server.info.appId, apikey: server.info.apiKey }, users: options.users, chatGroups: server.info.chatGroups };
    const cpu = { server: server.cpuMeter, postgres: postgresCpuMeter };
    return { server, url, scenarios: sendScenarios(target, (load) => runLoad({ ...load, cpu }), options.connections, options.sliceSeconds) };
  };
  return options.withPostgresDatabase((withUrl) =>
    options.withPostgresDatabase(async (withoutUrl) => {
      const withServer = await start(withUrl, env.with);
      try {
        const withoutServer = await start(withoutUrl, env.without);
        try {
          return await run({ with: side(withServer, withUrl), without: side(withoutServer, withoutUrl) });
        } finally {
          await withoutServer.stop();
        }
      } finally {
        await withServer.stop();
      }
    }),
  );
}
