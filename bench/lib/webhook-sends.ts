// Sends for bench/webhooks.ts (scenarios 2 to 4): a burst at a number of connections, and sends
// paced at a fixed rate (open loop), each a 1:1 message between the seeded users' pairs; and
// the calls to the bench's own processes.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { ServerHandle } from './processes.js';

/** The seeded users' pairs the sends go between (seed-2k to seed-2k+1). */
export const PAIRS = 2_000;
export type Parley = ServerHandle<{ port: number; appId: string; apiKey: string; chatGroups: number }>;
export const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export interface PacedResult {
  rate: number;
  /** Sends planned in the measured part, answered 200 there, and failed (any part). */
  planned: number;
  answered: number;
  failed: number;
  /** The send's own latency, from its planned time to its answer (ms). */
  sendP50Ms: number;
  sendP99Ms: number;
}

/** One 1:1 send, the n-th of a run (pair n mod 2,000): its status, message id and answer time. */
export function sendOne(agent: http.Agent, server: Parley, n: number): Promise<{ status: number; id?: string; at: number }> {
  const pair = n % PAIRS;
  const payload = `{"receiver":"seed-${pair * 2 + 1}","receiverType":"user","category":"message","type":"text","data":{"text":"Hello there 👋"}}`;
  return new Promise((resolve) => {
    const req = http.request(
      {
        agent,
        host: '127.0.0.1',
        port: server.info.port,
        method: 'POST',
        path: '/v3/messages',
        headers: {
          appid: server.info.appId,
          apikey: server.info.apiKey,
          onbehalfof: `seed-${pair * 2}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => {
          const at = now();
          const status = res.statusCode ?? 0;
          resolve(status === 200 ? { status, id: String(JSON.parse(text).data.id), at } : { status, at });
        });
      },
    );
    req.on('error', () => resolve({ status: 0, at: now() }));
    req.end(payload);
  });
}

/** `total` sends as fast as `connections` senders go (each one request at a time); answers how many got 200. */
export async function burst(server: Parley, total: number, connections: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  let next = 0;
  let ok = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < total) if ((await sendOne(agent, server, next++)).status === 200) ok++;
    }),
  );
  agent.destroy();
  return ok;
}

/**
 * Sends 1:1 messages at `rate` per second for `warmup` + `seconds`, open loop (the n-th at its
 * planned time, start + n / rate, over up to 64 kept-alive connections). Answers the measured
 * part's message ids with the time each answer arrived.
 */
export async function paced(server: Parley, rate: number, warmup: number, seconds: number): Promise<{ result: PacedResult; answers: Record<string, number> }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const total = Math.round(rate * (warmup + seconds));
  const skip = Math.round(rate * warmup);
  const answers: Record<string, number> = {};
  const latencies: number[] = [];
  let failed = 0;
  const start = now() + 50;
  const send = async (n: number) => {
    const answer = await sendOne(agent, server, n);
    if (answer.status !== 200) failed++;
    else if (n >= skip) {
      answers[answer.id!] = answer.at;
      latencies.push(answer.at - (start + (n * 1000) / rate));
    }
  };
  const inFlight: Array<Promise<void>> = [];
  let next = 0;
  while (next < total) {
    const due = Math.min(total, Math.floor(((now() - start) * rate) / 1000) + 1);
    while (next < due) inFlight.push(send(next++));
    await sleep(2);
  }
  await Promise.all(inFlight);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (p: number) => Math.round((latencies[Math.min(latencies.length - 1, Math.ceil(p * latencies.length) - 1)] ?? 0) * 10) / 10;
  return {
    result: { rate, planned: total - skip, answered: latencies.length, failed, sendP50Ms: at(0.5), sendP99Ms: at(0.99) },
    answers,
  };
}

/** GET or POST JSON to a bench process on loopback. */
export function call<T>(port: number, path: string, body?: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request({ host: '127.0.0.1', port, path, method: payload ? 'POST' : 'GET', agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve(JSON.parse(text) as T));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * Waits until `count()` reaches `target()` (read again once reached: sends cut off by a load's
 * end may still commit), or nothing new arrived for `quietMs`, or `capMs` passed.
 */
export async function waitForArrivals(count: () => Promise<number>, target: () => Promise<number>, quietMs: number, capMs: number): Promise<void> {
  const started = Date.now();
  let last = -1;
  let lastChange = Date.now();
  let goal = await target();
  while (Date.now() - started < capMs) {
    const n = await count();
    if (n !== last) [last, lastChange] = [n, Date.now()];
    if (n >= goal && (goal = await target()) <= n) return;
    if (Date.now() - lastChange > quietMs) return;
    await sleep(100);
  }
}
