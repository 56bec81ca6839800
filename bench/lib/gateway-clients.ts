// A load generator process of the gateway bench (bench/gateway.ts): up to ~19,000 users'
// clients of @parley/client (its built dist, as an app loads it; `npm run build` makes it), each
// over a `ws` socket, driven by the bench over IPC (GatewayClients below). A process holds at
// most 20,000 open files here, and each socket is one, so a large run uses two of these.
//
// What each client hears: the event frames whose message text carries `t=<ms since the epoch>`
// (the bench's sends, and the floor's frames), timed on arrival against it; `s=<round>` marks a
// message of the reconnect storm, counted per client to show none is lost or repeated.
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import type { ParleyClient } from '../../packages/client/src/index.js';
import { benchToken } from './gateway-tokens.js';

/** Who a generator connects: uids seed-<from> .. seed-<from+count-1>, each with its bench token. */
export interface ConnectSpec {
  url: string;
  appId: string;
  secret: string;
  from: number;
  count: number;
  /** Clients opening at once (the rest wait for one to get its hello). */
  window: number;
  /** Give each client a getToken() (answering its token again), as an app gives one that fetches a fresh token. */
  getToken?: boolean;
}

/** What a connect came to: clients greeted, not greeted (their states), the retries on the way and why. */
export interface Connected {
  opened: number;
  failed: number;
  ms: number;
  retries: Record<string, number>;
  failedStates: Record<string, number>;
}

export interface Collected {
  /** Bench events received since the mark (t= in their text). */
  received: number;
  /** Arrival minus t=, ms, of each (when asked for). */
  latencies?: Float64Array;
  /** The latest arrival since the mark (ms since the epoch). */
  lastAt: number;
  /** Size of the first event frame received since the mark, as JSON, bytes. */
  frameBytes: number;
  /** CPU of this process since the mark and since it started, µs, and its RSS now, MB. */
  cpuMicros: number;
  cpuTotalMicros: number;
  rssMb: number;
}

export interface StormState {
  states: Record<string, number>;
  /** Clients that were told 1012, and when the first and the last of them were. */
  restarted: number;
  firstRestartAt: number;
  lastRestartAt: number;
  /** Clients whose resume completed (`resumed`) since the mark, and when the last did. */
  resumed: number;
  lastResumedAt: number;
  /** When each resume completed (ms since the epoch), in no order. */
  resumedAts: number[];
  /** Per storm round: clients that got its message once, twice or more (at the listener), not at all. */
  rounds: Array<{ once: number; more: number; none: number }>;
  /** Event frames that came twice on the wire (the client drops the repeat). */
  wireRepeats: number;
  /** Why clients went reconnecting (close codes, or a reason) and how many ended unauthorized, since the mark. */
  closes: Record<string, number>;
}

const now = () => performance.timeOrigin + performance.now();

// ---- the child ---------------------------------------------------------------------------------

interface Tracked {
  client: ParleyClient;
  opened: boolean;
  restartedAt?: number;
  resumedAt?: number;
  rounds: Map<number, number>;
  frameIds: Set<string>;
}

async function child(): Promise<void> {
  const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../packages/client/dist/index.js');
  if (!fs.existsSync(dist)) throw new Error('packages/client/dist is not built: run `npm run build` first');
  const { createClient } = (await import(dist)) as typeof import('../../packages/client/src/index.js');
  let clients: Tracked[] = [];
  let received = 0;
  let lastAt = 0;
  let frameBytes = 0;
  let recording = false;
  let latencies: number[] = [];
  let cpuMark = process.cpuUsage();
  let stormMark = 0;

  const connect = async (spec: ConnectSpec) => {
    const started = now();
    const waiting: Array<() => void> = [];
    let opening = 0;
    const made: Tracked[] = [];
    // Why clients had to retry while connecting: close codes (1006: no answer), or no hello in time.
    const retries: Record<string, number> = {};
    const allOpen: Promise<void>[] = [];
    for (let i = 0; i < spec.count; i++) {
      if (opening >= spec.window) await new Promise<void>((resolve) => waiting.push(resolve));
      opening++;
      const uid = `seed-${spec.from + i}`;
      const token = benchToken(spec.secret, uid);
      const client = createClient({
        url: spec.url,
        appId: spec.appId,
        authToken: token,
        ...(spec.getToken ? { getToken: () => token } : {}),
        WebSocket: WebSocket as never,
        onListenerError: (error) => console.error(error),
      });
      const tracked: Tracked = { client, opened: false, rounds: new Map(), frameIds: new Set() };
      made.push(tracked);
      clients.push(tracked);
      client.on('event', (event) => {
        const text = (event.data as { message?: { data?: { text?: unknown } } } | undefined)?.message?.data?.text;
        if (typeof text !== 'string') return;
        const t = /t=(\d+(?:\.\d+)?)/.exec(text);
        if (!t) return;
        const at = now();
        received++;
        lastAt = Math.max(lastAt, at);
        if (frameBytes === 0) frameBytes = JSON.stringify(event).length;
        if (recording) latencies.push(at - Number(t[1]));
        const round = /\bs=(\d+)/.exec(text);
        if (round) tracked.rounds.set(Number(round[1]), (tracked.rounds.get(Number(round[1])) ?? 0) + 1);
      });
      client.on('frame', (frame) => {
        if (frame.type !== 'event' || stormMark === 0) return;
        const id = String(frame.id);
        if (tracked.frameIds.has(id)) wireRepeats++;
        else tracked.frameIds.add(id);
      });
      client.on('state', (state, detail) => {
        if (state === 'reconnecting' && detail.code === 1012 && stormMark > 0) tracked.restartedAt ??= now();
        if (stormMark > 0 && (state === 'reconnecting' || state === 'unauthorized')) {
          const why = state === 'unauthorized' ? `unauthorized after ${detail.code}` : String(detail.code ?? detail.reason ?? 'unknown');
          stormCloses[why] = (stormCloses[why] ?? 0) + 1;
        }
        if (state === 'reconnecting' && !tracked.opened) {
          const why = String(detail.code ?? detail.reason ?? 'unknown');
          retries[why] = (retries[why] ?? 0) + 1;
        }
      });
      client.on('resumed', () => {
        if (stormMark > 0) tracked.resumedAt = now();
      });
      allOpen.push(
        new Promise<void>((resolve) => {
          const off = client.on('state', (state) => {
            if (state !== 'open' && state !== 'unauthorized') return;
            off();
            tracked.opened = state === 'open';
            opening--;
            waiting.shift()?.();
            resolve();
          });
        }),
      );
      client.connect();
    }
    // A client the server never greets keeps retrying by itself; the bench counts it as failed.
    await Promise.race([Promise.all(allOpen), new Promise((resolve) => setTimeout(resolve, 180_000))]);
    const states: Record<string, number> = {};
    for (const c of made) if (!c.opened) states[c.client.state] = (states[c.client.state] ?? 0) + 1;
    return { opened: made.filter((c) => c.opened).length, failed: made.filter((c) => !c.opened).length, ms: Math.round(now() - started), retries, failedStates: states };
  };
  let wireRepeats = 0;
  let stormCloses: Record<string, number> = {};

  const handlers: Record<string, (args: any) => unknown> = {
    connect: (spec: ConnectSpec) => connect(spec),
    mark: ({ record, storm }: { record?: boolean; storm?: boolean }) => {
      received = 0;
      frameBytes = 0;
      lastAt = 0;
      latencies = [];
      recording = record ?? false;
      cpuMark = process.cpuUsage();
      if (storm) {
        stormMark = now();
        wireRepeats = 0;
        stormCloses = {};
        for (const c of clients) {
          c.rounds.clear();
          c.frameIds.clear();
          c.restartedAt = undefined;
          c.resumedAt = undefined;
        }
      }
      return true;
    },
    count: () => received,
    collect: ({ latencies: withLatencies }: { latencies?: boolean }): Collected => {
      const cpu = process.cpuUsage(cpuMark);
      return {
        received,
        ...(withLatencies ? { latencies: Float64Array.from(latencies) } : {}),
        lastAt,
        frameBytes,
        cpuMicros: cpu.user + cpu.system,
        cpuTotalMicros: process.cpuUsage().user + process.cpuUsage().system,
        rssMb: Math.round(process.memoryUsage.rss() / 1048576),
      };
    },
    storm: ({ rounds }: { rounds: number }): StormState => {
      const states: Record<string, number> = {};
      for (const c of clients) states[c.client.state] = (states[c.client.state] ?? 0) + 1;
      const restarted = clients.filter((c) => c.restartedAt !== undefined).map((c) => c.restartedAt!);
      const resumed = clients.filter((c) => c.resumedAt !== undefined).map((c) => c.resumedAt!);
      return {
        states,
        restarted: restarted.length,
        firstRestartAt: Math.min(...restarted),
        lastRestartAt: Math.max(...restarted, 0),
        resumed: resumed.length,
        lastResumedAt: Math.max(...resumed, 0),
        resumedAts: resumed,
        rounds: Array.from({ length: rounds }, (_, round) => {
          const counts = clients.map((c) => c.rounds.get(round) ?? 0);
          return { once: counts.filter((n) => n === 1).length, more: counts.filter((n) => n > 1).length, none: counts.filter((n) => n === 0).length };
        }),
        wireRepeats,
        closes: stormCloses,
      };
    },
    close: async () => {
      for (const c of clients) c.client.close();
      clients = [];
      stormMark = 0;
      // The sockets' closing handshakes.
      await new Promise((resolve) => setTimeout(resolve, 500));
      return true;
    },
  };
  process.on('message', (message: { id: number; cmd: string; args?: unknown }) => {
    void (async () => {
      try {
        process.send!({ id: message.id, ok: await handlers[message.cmd]!(message.args ?? {}) });
      } catch (error) {
        process.send!({ id: message.id, error: String((error as Error)?.stack ?? error) });
      }
    })();
  });
  process.send!({ ready: true });
}

// ---- the bench's side --------------------------------------------------------------------------

/** One generator process and the commands it takes. */
export class GatewayClients {
  private next = 0;
  private readonly pending = new Map<number, { resolve: (value: any) => void; reject: (error: Error) => void }>();

  private constructor(private readonly process: ChildProcess) {
    process.on('message', (message: { id?: number; ok?: unknown; error?: string }) => {
      if (message.id === undefined) return;
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error !== undefined) waiter?.reject(new Error(message.error));
      else waiter?.resolve(message.ok);
    });
    process.on('exit', (code) => {
      for (const waiter of this.pending.values()) waiter.reject(new Error(`a gateway client process exited (${code})`));
      this.pending.clear();
    });
  }

  static start(): Promise<GatewayClients> {
    const child = fork(fileURLToPath(import.meta.url), ['--child'], { execArgv: ['--import', 'tsx'], serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    return new Promise((resolve, reject) => {
      child.once('message', () => resolve(new GatewayClients(child)));
      child.once('exit', (code) => reject(new Error(`a gateway client process exited (${code}) before it was ready`)));
    });
  }

  private call<T>(cmd: string, args?: unknown): Promise<T> {
    const id = ++this.next;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.process.send({ id, cmd, args });
    });
  }

  connect(spec: ConnectSpec) {
    return this.call<Connected>('connect', spec);
  }
  mark(options: { record?: boolean; storm?: boolean } = {}) {
    return this.call<boolean>('mark', options);
  }
  count() {
    return this.call<number>('count');
  }
  collect(latencies = false) {
    return this.call<Collected>('collect', { latencies });
  }
  storm(rounds: number) {
    return this.call<StormState>('storm', { rounds });
  }
  close() {
    return this.call<boolean>('close');
  }
  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (this.process.exitCode !== null) return resolve();
      this.process.once('exit', () => resolve());
      this.process.kill('SIGTERM');
    });
  }
}

if (process.argv.includes('--child')) await child();
