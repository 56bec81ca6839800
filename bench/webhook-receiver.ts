// The far side of the webhooks bench (bench/webhooks.ts), in its own process so that what it
// does (parsing 5,000 deliveries a second, or reading 1,000 event streams) never shares an event
// loop with the load generator's clock or autocannon: each arrival is stamped when it happens,
// not when a busy loop gets to it. Two kinds, by BENCH_RECEIVER:
//
// - `webhook`: a webhook receiver on loopback that answers 200 at once and records, for each
//   message, when its `message_sent` first arrived (and how many arrivals there were).
// - `streams`: BENCH_STREAMS readers of GET /v3/events (BENCH_STREAM_URL, headers appid and
//   apikey from BENCH_APP_ID and BENCH_API_KEY), each recording when every event reached it.
//
// Both answer the bench on their port: GET /_count (what arrived so far; the receiver also has
// /_reset, and /_hold and /_release to keep deliveries unanswered for a while) and POST /_report with
// `{"sent": {messageId: answeredAtMs}, "mark": ms}`: the arrival latencies of those messages
// (arrival - the send's answer), how many arrived, and the arrivals after `mark`. Times are
// epoch milliseconds with sub-millisecond precision (performance.timeOrigin + now()), the same
// clock in every process of the machine.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { announceReady } from './lib/processes.js';

const now = () => performance.timeOrigin + performance.now();

export interface ReceiverReport {
  /** Requests (webhook) or events (streams, summed over the streams) received in all. */
  received: number;
  /** Of the sent messages: how many arrived (webhook), or arrived at every stream (streams). */
  arrived: number;
  /** Arrival minus the send's answer, ms, over every arrival of a sent message. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** First and last arrival of a sent message (epoch ms). */
  firstAt: number;
  lastAt: number;
  /** Arrivals (of any message) after `mark`. */
  afterMark: number;
  /** Webhook only: the first and last arrival of any message (epoch ms). */
  firstAnyAt?: number;
  lastAnyAt?: number;
  /**
   * Webhook only: the mean latency (ms) of the messages answered in each second after the first
   * answer: a tail that is a backlog carried in from before (a warm-up) shows as high first
   * seconds, a stall as one high second in the middle.
   */
  meanBySecondMs?: number[];
  /** Streams only: streams that got every sent message's event, streams that ended early, events out of order. */
  completeStreams?: number;
  closedStreams?: number;
  outOfOrder?: number;
}

/** Percentile of sorted values (nearest rank). */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const round = (ms: number) => Math.round(ms * 10) / 10;

function summarise(latencies: number[], rest: Omit<ReceiverReport, 'p50Ms' | 'p99Ms' | 'maxMs'>): ReceiverReport {
  const sorted = Float64Array.from(latencies).sort();
  return { ...rest, p50Ms: round(percentile(sorted, 50)), p99Ms: round(percentile(sorted, 99)), maxMs: round(percentile(sorted, 100)) };
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

interface ReportRequest {
  sent: Record<string, number>;
  mark?: number;
}

// --- webhook: answer 200 at once, remember each message's first arrival -------------------
function webhookReceiver(): http.Server {
  const firstArrival = new Map<string, number>();
  const arrivals: number[] = [];
  // While held (/_hold), deliveries get no answer until /_release: the dispatcher's
  // lanes in flight wait, and a backlog builds in the database (bench/webhooks.ts, throughput).
  let held: http.ServerResponse[] | undefined;
  return http.createServer(async (req, res) => {
    const at = now();
    if (req.url === '/hook') {
      const body = await readBody(req);
      res.statusCode = 200;
      if (held) held.push(res);
      else res.end('ok');
      arrivals.push(at);
      try {
        const id = String(JSON.parse(body)?.data?.message?.id);
        if (!firstArrival.has(id)) firstArrival.set(id, at);
      } catch {
        // counted, not matched
      }
      return;
    }
    if (req.url === '/_count') return res.end(JSON.stringify({ received: arrivals.length, unique: firstArrival.size }));
    if (req.url === '/_reset') {
      firstArrival.clear();
      arrivals.length = 0;
      return res.end('{}');
    }
    if (req.url === '/_hold') {
      held ??= [];
      return res.end('{}');
    }
    if (req.url === '/_release') {
      for (const waiting of held ?? []) waiting.end('ok');
      held = undefined;
      return res.end('{}');
    }
    if (req.url === '/_report') {
      const { sent, mark = Infinity } = JSON.parse(await readBody(req)) as ReportRequest;
      const latencies: number[] = [];
      let firstAt = Infinity;
      let lastAt = 0;
      // (A loop, not Math.min(...): a long run's answers would be too many arguments.)
      let firstAnswer = Infinity;
      for (const answeredAt of Object.values(sent)) firstAnswer = Math.min(firstAnswer, answeredAt);
      const seconds: Array<{ sum: number; n: number }> = [];
      for (const [id, answeredAt] of Object.entries(sent)) {
        const at = firstArrival.get(id);
        if (at === undefined) continue;
        latencies.push(at - answeredAt);
        firstAt = Math.min(firstAt, at);
        lastAt = Math.max(lastAt, at);
        const second = (seconds[Math.floor((answeredAt - firstAnswer) / 1000)] ??= { sum: 0, n: 0 });
        second.sum += at - answeredAt;
        second.n++;
      }
      const meanBySecondMs = Array.from(seconds, (second) => (second ? Math.round(second.sum / second.n) : 0));
      const afterMark = arrivals.filter((t) => t > mark).length;
      let [firstAnyAt, lastAnyAt] = [Infinity, 0];
      for (const t of arrivals) [firstAnyAt, lastAnyAt] = [Math.min(firstAnyAt, t), Math.max(lastAnyAt, t)];
      return res.end(JSON.stringify(summarise(latencies, { received: arrivals.length, arrived: latencies.length, firstAt, lastAt, afterMark, firstAnyAt, lastAnyAt, meanBySecondMs })));
    }
    res.statusCode = 404;
    res.end();
  });
}

// --- streams: BENCH_STREAMS readers of the event stream ---------------------------------------
async function streamReaders(control: http.Server): Promise<void> {
  const count = Number(process.env.BENCH_STREAMS ?? 1000);
  const url = new URL(process.env.BENCH_STREAM_URL!);
  const headers = { appid: process.env.BENCH_APP_ID!, apikey: process.env.BENCH_API_KEY!, accept: 'text/event-stream' };
  // Per event id: its message id (each payload is parsed once, by the first stream it reaches:
  // the streams carry the same bytes) and its arrival time at each stream.
  const messageOf = new Map<string, string>();
  const arrivalsOf = new Map<string, { times: number[]; streams: number[] }>();
  const lastIdOf = new Float64Array(count);
  const eventsOf = new Int32Array(count);
  let outOfOrder = 0;
  let closed = 0;
  let received = 0;
  const open = (n: number) =>
    new Promise<void>((resolve, reject) => {
      const req = http.get({ host: url.hostname, port: url.port, path: url.pathname + url.search, headers, agent: false }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream ${n} answered ${res.statusCode}`));
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (chunk: string) => {
          const at = now();
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            if (!block.startsWith('id: ')) continue;
            const id = block.slice(4, block.indexOf('\n'));
            received++;
            if (Number(id) <= lastIdOf[n]!) outOfOrder++;
            lastIdOf[n] = Number(id);
            eventsOf[n]!++;
            let arrivals = arrivalsOf.get(id);
            if (!arrivals) {
              const data = block.slice(block.indexOf('\ndata: ') + 7);
              messageOf.set(String(JSON.parse(data)?.data?.message?.id), id);
              arrivalsOf.set(id, (arrivals = { times: [], streams: [] }));
            }
            arrivals.times.push(at);
            arrivals.streams.push(n);
          }
        });
        res.on('close', () => closed++);
        resolve();
      });
      req.on('error', reject);
    });
  // A hundred at a time, so the server's accept queue never overflows.
  for (let n = 0; n < count; n += 100) await Promise.all(Array.from({ length: Math.min(100, count - n) }, (_, k) => open(n + k)));
  control.on('request', async (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.url === '/_count') {
      // The fewest events any stream has had, so the bench knows every stream is live.
      return res.end(JSON.stringify({ received, events: arrivalsOf.size, fewestPerStream: Math.min(...eventsOf), closed }));
    }
    if (req.url === '/_report') {
      const { sent, mark = Infinity } = JSON.parse(await readBody(req)) as ReportRequest;
      const latencies: number[] = [];
      let firstAt = Infinity;
      let lastAt = 0;
      let arrived = 0;
      let afterMark = 0;
      for (const { times } of arrivalsOf.values()) for (const t of times) if (t > mark) afterMark++;
      // Per stream, how many of the sent messages' events reached it: complete when all did.
      const sentSeen = new Int32Array(count);
      const entries = Object.entries(sent);
      for (const [messageId, answeredAt] of entries) {
        const arrivals = arrivalsOf.get(messageOf.get(messageId) ?? '');
        if (!arrivals) continue;
        if (arrivals.times.length >= count) arrived++;
        for (const n of arrivals.streams) sentSeen[n]!++;
        for (const t of arrivals.times) {
          latencies.push(t - answeredAt);
          firstAt = Math.min(firstAt, t);
          lastAt = Math.max(lastAt, t);
        }
      }
      const completeStreams = sentSeen.filter((n) => n === entries.length).length;
      return res.end(JSON.stringify(summarise(latencies, { received, arrived, firstAt, lastAt, afterMark, completeStreams, closedStreams: closed, outOfOrder })));
    }
    res.statusCode = 404;
    res.end();
  });
}

const kind = process.env.BENCH_RECEIVER ?? 'webhook';
const server = kind === 'webhook' ? webhookReceiver() : http.createServer();
server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
if (kind === 'streams') await streamReaders(server);
const port = (server.address() as { port: number }).port;
announceReady({ port, url: `http://127.0.0.1:${port}/hook` });
process.on('SIGTERM', () => process.exit(0));
