// The clients of the crash scenario (bench/lib/crash.ts): senders that post messages with unique
// muids over keep-alive connections until the server dies under them, and the re-send of what
// they were never answered. What each client learnt is kept in a Ledger, which the checks
// (crash-check.ts) compare with what the database holds.
import http from 'node:http';

/** A running server and the app to send in. */
export interface Target {
  port: number;
  appId: string;
  apiKey: string;
}

/** One message a client means to store once: its muid names it, its text repeats the muid. */
export interface Planned {
  sender: string;
  receiver: string;
  receiverType: 'user' | 'group';
  muid: string;
  text: string;
}

/** What the clients know: each muid they sent and the answer they got, if any. */
export class Ledger {
  /** Answered 2xx, with the message's id. */
  readonly acked = new Map<string, { plan: Planned; id: string }>();
  /** Sent, and no answer came (the server died, or the connection broke). */
  readonly unanswered = new Map<string, Planned>();
  /** Answered, but not 2xx. */
  readonly refused = new Map<string, { plan: Planned; status: number; body: string }>();
  /** Every muid ever sent, and to whom. */
  readonly sent = new Map<string, Planned>();
  /** The next sequence number of each sender. */
  readonly nextSeq = new Map<string, number>();

  plan(sender: string, to: { receiver: string; receiverType: 'user' | 'group' }): Planned {
    const seq = this.nextSeq.get(sender) ?? 0;
    this.nextSeq.set(sender, seq + 1);
    const muid = `${sender}-m${seq}`;
    const plan = { sender, ...to, muid, text: `crash test ${muid}` };
    this.sent.set(muid, plan);
    return plan;
  }
}

/** A POST /v3/messages, answered or not. Rejects when no complete answer arrives. */
export function postMessage(agent: http.Agent, target: Target, plan: Planned): Promise<{ status: number; body: string }> {
  const payload = JSON.stringify({
    receiver: plan.receiver,
    receiverType: plan.receiverType,
    category: 'message',
    type: 'text',
    data: { text: plan.text },
    muid: plan.muid,
  });
  return request(agent, target, { method: 'POST', path: '/v3/messages', onBehalfOf: plan.sender, payload });
}

/** One request to the target's app over the agent's keep-alive connections. */
export function request(agent: http.Agent, target: Target, options: { method: string; path: string; onBehalfOf?: string; payload?: string }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        host: '127.0.0.1',
        port: target.port,
        method: options.method,
        path: options.path,
        headers: {
          appid: target.appId,
          apikey: target.apiKey,
          ...(options.onBehalfOf ? { onbehalfof: options.onBehalfOf } : {}),
          ...(options.payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(options.payload) } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('aborted', () => reject(new Error('the answer was cut off')));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.payload);
  });
}

/** Where sender i's k-th message goes: its two neighbours' 1:1 conversations and its group, in turn. */
export type Route = (senderIndex: number, k: number) => { receiver: string; receiverType: 'user' | 'group' };

export interface LoadRound {
  /** Requests sent in this round. */
  sent: number;
  acked: number;
  refused: number;
  /** Muids sent in this round that got no answer. */
  unanswered: string[];
  /** Acknowledged when the server was killed. */
  ackedAtKill: number;
  /** The server was killed by the deadline, before enough acknowledgements. */
  deadlineHit: boolean;
  /** From the first send to the kill. */
  secondsToKill: number;
}

/**
 * Senders post in a loop, one request at a time each, until their server dies: once `killAfterAcks`
 * sends of this round are acknowledged, the next request sent calls `kill` (so every sender has
 * one in flight then). A sender stops at the first request that gets no answer. `deadlineMs`
 * guards a server that stops answering: it is killed then, and the round says so.
 */
export async function sendUntilKilled(options: {
  agent: http.Agent;
  target: Target;
  ledger: Ledger;
  senders: string[];
  route: Route;
  killAfterAcks: number;
  kill: () => void;
  deadlineMs: number;
}): Promise<LoadRound> {
  const { agent, target, ledger, senders } = options;
  const round: LoadRound = { sent: 0, acked: 0, refused: 0, unanswered: [], ackedAtKill: 0, deadlineHit: false, secondsToKill: 0 };
  const startedAt = Date.now();
  let killed = false;
  const killNow = (byDeadline: boolean) => {
    if (killed) return;
    killed = true;
    round.deadlineHit = byDeadline;
    round.ackedAtKill = round.acked;
    round.secondsToKill = (Date.now() - startedAt) / 1000;
    options.kill();
  };
  const deadline = setTimeout(() => killNow(true), options.deadlineMs);
  const sender = async (index: number) => {
    const uid = senders[index]!;
    for (;;) {
      const plan = ledger.plan(uid, options.route(index, ledger.nextSeq.get(uid) ?? 0));
      round.sent++;
      const answer = postMessage(agent, target, plan);
      if (round.acked >= options.killAfterAcks) killNow(false);
      try {
        const { status, body } = await answer;
        if (status >= 200 && status < 300) {
          ledger.acked.set(plan.muid, { plan, id: String((JSON.parse(body) as { data: { id: string } }).data.id) });
          round.acked++;
        } else {
          ledger.refused.set(plan.muid, { plan, status, body: body.slice(0, 300) });
          round.refused++;
        }
      } catch {
        ledger.unanswered.set(plan.muid, plan);
        round.unanswered.push(plan.muid);
        return;
      }
    }
  };
  try {
    await Promise.all(senders.map((_, index) => sender(index)));
  } finally {
    clearTimeout(deadline);
  }
  return round;
}

export interface ResendResult {
  /** Re-sent: every unanswered and refused message of the clients. */
  resent: number;
  /** Answered 2xx with the id the message was stored with before the re-send. */
  answeredFirstId: number;
  /** Answered 2xx for a message not stored before: stored now. */
  storedNow: number;
  /**
   * Acknowledged messages re-sent as well (each sender's last ones before the kill): what a client
   * does whose answer was lost after the commit, made certain to happen in every round.
   */
  acknowledgedResent: number;
  /** Of those, answered with their acknowledged id. */
  acknowledgedSameId: number;
  /** Answered 2xx with another id than the one stored or acknowledged before (a duplicate). */
  answeredOtherId: Array<{ muid: string; stored: string; answered: string }>;
  /** No 2xx answer. */
  failed: Array<{ muid: string; status: number | string; body: string }>;
}

/**
 * Each client re-sends its unanswered (and refused) messages with the same muid, and its last
 * `acknowledgedPerSender` acknowledged ones, one at a time, the clients concurrently.
 * `storedBefore` holds each muid's id as read from the database before.
 */
export async function resendUnacknowledged(agent: http.Agent, target: Target, ledger: Ledger, storedBefore: Map<string, string>, acknowledgedPerSender = 0): Promise<ResendResult> {
  const result: ResendResult = { resent: 0, answeredFirstId: 0, storedNow: 0, acknowledgedResent: 0, acknowledgedSameId: 0, answeredOtherId: [], failed: [] };
  const bySender = new Map<string, Array<{ plan: Planned; ackedId?: string }>>();
  const add = (entry: { plan: Planned; ackedId?: string }) => {
    const list = bySender.get(entry.plan.sender);
    if (list) list.push(entry);
    else bySender.set(entry.plan.sender, [entry]);
  };
  for (const plan of ledger.unanswered.values()) add({ plan });
  for (const { plan } of ledger.refused.values()) add({ plan });
  if (acknowledgedPerSender > 0) {
    const lastAcked = new Map<string, Array<{ plan: Planned; ackedId: string }>>();
    for (const { plan, id } of ledger.acked.values()) {
      const list = lastAcked.get(plan.sender) ?? [];
      list.push({ plan, ackedId: id });
      if (list.length > acknowledgedPerSender) list.shift();
      lastAcked.set(plan.sender, list);
    }
    for (const list of lastAcked.values()) list.forEach(add);
  }
  await Promise.all(
    [...bySender.values()].map(async (entries) => {
      for (const { plan, ackedId } of entries) {
        if (ackedId === undefined) result.resent++;
        else result.acknowledgedResent++;
        let answer: { status: number; body: string };
        try {
          answer = await postMessage(agent, target, plan);
        } catch (error) {
          result.failed.push({ muid: plan.muid, status: 'no answer', body: String(error) });
          continue;
        }
        if (answer.status < 200 || answer.status >= 300) {
          result.failed.push({ muid: plan.muid, status: answer.status, body: answer.body.slice(0, 300) });
          continue;
        }
        const id = String((JSON.parse(answer.body) as { data: { id: string } }).data.id);
        const stored = ackedId ?? storedBefore.get(plan.muid);
        if (stored !== undefined && stored !== id) result.answeredOtherId.push({ muid: plan.muid, stored, answered: id });
        else if (ackedId !== undefined) result.acknowledgedSameId++;
        else if (stored === undefined) result.storedNow++;
        else result.answeredFirstId++;
        // An acknowledged message keeps the id it was acknowledged with: a second one is a duplicate.
        if (ackedId !== undefined) continue;
        ledger.unanswered.delete(plan.muid);
        ledger.refused.delete(plan.muid);
        ledger.acked.set(plan.muid, { plan, id });
      }
    }),
  );
  return result;
}
