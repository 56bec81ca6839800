// The fake FCM of the notifications bench (bench/notifications.ts), in its own process: the
// tests' fake (test/helpers/fake-providers/fcm.ts, which checks the OAuth2 exchange and every v1
// message as Google would), so the server speaks the real protocol, and what the fake does for
// thousands of deliveries a second is neither counted with the load generator's CPU nor in the
// way of its clock.
//
// The tests' fake keeps every request it took; here each accepted send is kept only as its
// arrival time under its message id (data.messageId), so a long run's memory stays flat. The
// bench asks on a second port:
//   GET  /_account?project=ID  a new service account of that project (its key known to the fake)
//   GET  /_count               deliveries accepted, requests, protocol problems so far
//   GET  /_problems            the protocol problems (none, when the server spoke FCM properly)
//   POST /_report              {"sent": {messageId: answeredAtMs}}: of those messages, how many had
//                              a delivery, the deliveries, the first arrival's latency (arrival
//                              minus the send's answer: p50, p99, max), the last arrival's, and
//                              the first and last arrival times
//   POST /_reset               forgets the arrivals
// Times are epoch milliseconds with sub-millisecond precision (performance.timeOrigin + now()),
// the same clock in every process of the machine.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { startFakeFcm, type FcmSend } from '../../test/helpers/fake-providers/fcm.js';
import { announceReady } from './processes.js';

const now = () => performance.timeOrigin + performance.now();

/** What the bench's POST /_report answers. */
export interface FcmReport {
  /** Messages asked about, and how many of them had at least one delivery. */
  messages: number;
  arrived: number;
  /** Deliveries of those messages (one per recipient's token). */
  deliveries: number;
  /** Per message, its first delivery's arrival minus the send's answer, ms. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Over the messages, the latest last delivery's arrival minus that message's answer, ms. */
  lastMs: number;
  /** The first and last arrival of any delivery of those messages (epoch ms). */
  firstAt: number;
  lastAt: number;
}

interface Arrivals {
  first: number;
  last: number;
  count: number;
}

const byMessage = new Map<string, Arrivals>();
let delivered = 0;
let requests = 0;

/** Stands in for the fake's list of sends: keeps each one's arrival under its message id, not the request. */
class ArrivalRecorder extends Array<FcmSend> {
  override push(...sends: FcmSend[]): number {
    const at = now();
    for (const send of sends) {
      delivered++;
      const id = String(send.body?.message?.data?.messageId);
      const seen = byMessage.get(id);
      if (seen) {
        seen.last = at;
        seen.count++;
      } else byMessage.set(id, { first: at, last: at, count: 1 });
    }
    return 0;
  }
}

/** Stands in for the fake's list of every well-formed request: counts them. */
class RequestCounter extends Array<FcmSend> {
  override push(...sends: FcmSend[]): number {
    requests += sends.length;
    return 0;
  }
}

const fake = await startFakeFcm();
fake.sends = new ArrivalRecorder();
fake.requests = new RequestCounter();

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
const round = (ms: number) => Math.round(ms * 10) / 10;

function report(sent: Record<string, number>): FcmReport {
  const firsts: number[] = [];
  let deliveries = 0;
  let lastMs = 0;
  let firstAt = Infinity;
  let lastAt = 0;
  for (const [id, answeredAt] of Object.entries(sent)) {
    const seen = byMessage.get(id);
    if (!seen) continue;
    firsts.push(seen.first - answeredAt);
    deliveries += seen.count;
    lastMs = Math.max(lastMs, seen.last - answeredAt);
    firstAt = Math.min(firstAt, seen.first);
    lastAt = Math.max(lastAt, seen.last);
  }
  const sorted = Float64Array.from(firsts).sort();
  return {
    messages: Object.keys(sent).length,
    arrived: firsts.length,
    deliveries,
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
    maxMs: round(percentile(sorted, 100)),
    lastMs: round(lastMs),
    firstAt: firsts.length ? firstAt : 0,
    lastAt,
  };
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

const control = http.createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  if (url.pathname === '/_account') return res.end(JSON.stringify(fake.serviceAccount(url.searchParams.get('project') ?? 'parley-bench')));
  if (url.pathname === '/_count') return res.end(JSON.stringify({ delivered, requests, problems: fake.problems.length }));
  if (url.pathname === '/_problems') return res.end(JSON.stringify(fake.problems.slice(0, 20)));
  if (url.pathname === '/_report') return res.end(JSON.stringify(report((JSON.parse(await readBody(req)) as { sent: Record<string, number> }).sent)));
  if (url.pathname === '/_reset') {
    byMessage.clear();
    return res.end('{}');
  }
  res.statusCode = 404;
  res.end();
});
await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
announceReady({ port: (control.address() as { port: number }).port, fcmUrl: fake.baseUrl, origin: fake.origin });
process.on('SIGTERM', () => {
  void fake.close().then(() => process.exit(0));
});
