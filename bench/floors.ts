// The floors (bench/floor-server.ts): the same loads as Parley's uncached history page and 1:1
// send, against bare Fastify and pg doing the least either could do. What they reach, as a
// ratio of the same baselines, is what this machine allows any design (docs/performance.md, "Baselines and floors").
import { runLoad, type LoadOptions, type LoadResult, type ScenarioReport } from './lib/load.js';
import { postgresCpuMeter, startServerProcess } from './lib/processes.js';
import { sendScenarios } from './lib/send-load.js';

export interface FloorRun {
  databaseUrl: string;
  connections: number[];
  durationSeconds: number;
  wanted: (name: string) => boolean;
  /** Measures (and logs) the Fastify page baseline now, at this concurrency (when history pages are measured). */
  fastifyPage: ((connections: number, when: string) => Promise<number>) | undefined;
  /** Measures (and logs) a raw INSERT rate at this concurrency. */
  rawInsert: (connections: number, when: string) => Promise<number>;
  report: (row: ScenarioReport) => void;
}

export async function floorScenarios(run: FloorRun): Promise<void> {
  const fastifyPage = run.wanted('history page floor') ? run.fastifyPage : undefined;
  const send = run.wanted('send message floor');
  // A server per load, so its pooled connections are gone before the raw INSERTs open theirs
  // (PostgreSQL's max_connections). Its page table is seeded by the first only.
  const withServer = async (measure: (base: string, load: (options: LoadOptions) => Promise<LoadResult>, pageRows: number) => Promise<LoadResult>) => {
    const server = await startServerProcess<{ port: number; pageRows: number }>('floor-server.ts', { DATABASE_URL: run.databaseUrl });
    try {
      const load = (options: LoadOptions) => runLoad({ ...options, cpu: { server: server.cpuMeter, postgres: postgresCpuMeter } });
      return await measure(`http://127.0.0.1:${server.info.port}`, load, server.info.pageRows);
    } finally {
      await server.stop();
    }
  };
  for (const connections of run.connections) {
    if (fastifyPage) {
      // Another page each time, from the newest back, as Parley's "another each time"; against
      // the Fastify page right before and after it (bench/run.ts, fastifyPageRate).
      const before = await fastifyPage(connections, ' (before the page floor)');
      const result = await withServer((base, load, rows) => {
        const pages = Math.max(1, Math.floor(rows / 50) - 1);
        let n = 0;
        return load({ url: `${base}/page`, connections, durationSeconds: run.durationSeconds, path: () => `/page?id=${rows + 1 - 50 * (n++ % pages)}` });
      });
      const baselineRate = Math.round((before + (await fastifyPage(connections, ' (after the page floor)'))) / 2);
      run.report({ scenario: 'history page floor (50 stored, rendered)', engine: 'postgres', connections, result, baseline: 'Fastify page', baselineRate });
    }
    if (send) {
      const rates = [await run.rawInsert(connections, ' (before the send floors)')];
      const results: LoadResult[] = [];
      for (const path of ['', '/coalesced']) {
        results.push(await withServer((base, load) => sendScenarios({ base: `${base}${path}`, headers: {}, users: 4000, chatGroups: 0 }, load, connections, run.durationSeconds).oneToOne()));
        rates.push(await run.rawInsert(connections, path ? ' (after the send floors)' : ' (between the send floors)'));
      }
      const around = (n: number) => Math.round((rates[n]! + rates[n + 1]!) / 2);
      run.report({ scenario: 'send message floor (one INSERT each)', engine: 'postgres', connections, result: results[0]!, baseline: 'raw INSERT', baselineRate: around(0) });
      run.report({ scenario: 'send message floor (coalesced INSERTs)', engine: 'postgres', connections, result: results[1]!, baseline: 'raw INSERT', baselineRate: around(1) });
    }
  }
}
