// Scenario 5 of bench/webhooks.ts: commit to receiver for sends that each come after a quiet
// spell, when the event feed polls at its idle pace (every 200 ms once the log has been still
// for a second) unless a commit wakes it (docs/events.md).
import http from 'node:http';
import type { ReceiverReport } from '../webhook-receiver.js';
import { call, sendOne, waitForArrivals, type Parley } from './webhook-sends.js';

export interface QuietLatencyResult {
  sends: number;
  pauseMs: number;
  arrived: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** `sends` single sends, each `pauseMs` after the last; per message, its arrival minus the send's answer. */
export async function quietLatency(server: Parley, receiverPort: number, sends = 20, pauseMs = 1_500): Promise<QuietLatencyResult> {
  const agent = new http.Agent({ keepAlive: true });
  const answers: Record<string, number> = {};
  try {
    for (let n = 0; n < sends; n++) {
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
      const sent = await sendOne(agent, server, n);
      if (sent.status === 200) answers[sent.id!] = sent.at;
    }
    const count = async () => (await call<ReceiverReport>(receiverPort, '/_report', { sent: answers })).arrived;
    await waitForArrivals(count, async () => Object.keys(answers).length, 5_000, 30_000);
    const report = await call<ReceiverReport>(receiverPort, '/_report', { sent: answers });
    return { sends, pauseMs, arrived: report.arrived, p50Ms: report.p50Ms, p99Ms: report.p99Ms, maxMs: report.maxMs };
  } finally {
    agent.destroy();
  }
}
