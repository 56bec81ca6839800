import type { Logger } from '../../domain/context.js';

/** What gateways tell each other (docs/realtime.md, "Several nodes"); never stored. */
export type BusMessage =
  /** Typing: started (`on`) or ended. */
  | { k: 'typing'; app: string; sender: string; receiver: string; receiverType: 'user' | 'group'; on: boolean }
  /** A user's presence changed. */
  | { k: 'presence'; app: string; uid: string; status: 'online' | 'offline'; at?: number }
  /** A user's tokens or account changed: their sockets' tokens are checked again. */
  | { k: 'revoked'; app: string; uid: string };

/** A NOTIFY payload stays under PostgreSQL's 8,000 bytes. */
const MAX_PAYLOAD = 7_500;

/**
 * The gateway's channel between nodes for what the event log does not hold: typing, presence,
 * revocations. A message reaches this node's handlers at once, and other nodes through
 * `notify` (PostgreSQL's NOTIFY on a channel of the gateway's own, heard by `Database.listen`),
 * gathered for `gatherMs` into one NOTIFY (a JSON array, split under 8,000 bytes), at most
 * `maxNotifiesPerSecond`: beyond it, typing is dropped (ephemeral), while presence and
 * revocations wait for the next second. A node ignores its own messages.
 */
export class GatewayBus {
  private readonly handlers: Array<(message: BusMessage) => void> = [];
  private queue: BusMessage[] = [];
  private timer: NodeJS.Timeout | undefined;
  private windowStart = 0;
  private sentInWindow = 0;
  private unlisten: (() => Promise<void>) | undefined;
  /** Messages sent to and heard from other nodes, and typing dropped at the rate bound. */
  readonly counts = { sent: 0, heard: 0, dropped: 0 };

  constructor(
    private readonly deps: {
      nodeId: string;
      /** Absent where no other process shares the database (the embedded one). */
      notify?: (payload: string) => Promise<void>;
      listen?: (onPayload: (payload?: string) => void, log: Logger) => Promise<() => Promise<void>>;
      gatherMs: number;
      maxNotifiesPerSecond: number;
    },
  ) {}

  onMessage(handler: (message: BusMessage) => void): void {
    this.handlers.push(handler);
  }

  /** Starts hearing other nodes (PostgreSQL). */
  async start(log: Logger): Promise<void> {
    if (this.unlisten || !this.deps.listen) return;
    this.unlisten = await this.deps.listen((payload) => this.heard(payload, log), log);
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.queue = [];
    const unlisten = this.unlisten;
    this.unlisten = undefined;
    await unlisten?.();
  }

  /** Hands the message to this node's handlers now, and to the other nodes' soon. */
  publish(message: BusMessage, log: Logger): void {
    this.handle(message);
    if (!this.deps.notify) return;
    this.queue.push(message);
    this.timer ??= setTimeout(() => this.flush(log), this.deps.gatherMs);
  }

  private handle(message: BusMessage): void {
    for (const handler of this.handlers) handler(message);
  }

  private heard(payload: string | undefined, log: Logger): void {
    if (payload === undefined) return;
    let parsed: { n?: unknown; m?: unknown };
    try {
      parsed = JSON.parse(payload) as { n?: unknown; m?: unknown };
    } catch {
      log.warn('an unreadable gateway signal was ignored');
      return;
    }
    if (parsed.n === this.deps.nodeId || !Array.isArray(parsed.m)) return;
    for (const message of parsed.m as BusMessage[]) {
      this.counts.heard++;
      this.handle(message);
    }
  }

  private flush(log: Logger): void {
    this.timer = undefined;
    const now = Date.now();
    if (now - this.windowStart >= 1_000) {
      this.windowStart = now;
      this.sentInWindow = 0;
    }
    let messages = this.queue;
    this.queue = [];
    if (this.sentInWindow >= this.deps.maxNotifiesPerSecond) {
      // Over the bound: typing is dropped, the rest waits for the next window.
      const kept = messages.filter((message) => message.k !== 'typing');
      this.counts.dropped += messages.length - kept.length;
      this.queue = kept;
      if (kept.length > 0) this.timer = setTimeout(() => this.flush(log), this.windowStart + 1_000 - now);
      return;
    }
    while (messages.length > 0 && this.sentInWindow < this.deps.maxNotifiesPerSecond) {
      const batch: string[] = [];
      let size = 0;
      let taken = 0;
      for (const message of messages) {
        const text = JSON.stringify(message);
        if (batch.length > 0 && size + text.length + 1 > MAX_PAYLOAD) break;
        batch.push(text);
        size += text.length + 1;
        taken++;
      }
      messages = messages.slice(taken);
      this.sentInWindow++;
      this.counts.sent += taken;
      this.deps.notify!(`{"n":${JSON.stringify(this.deps.nodeId)},"m":[${batch.join(',')}]}`).catch((error: unknown) => log.warn({ err: error }, 'could not tell other nodes of typing or presence'));
    }
    if (messages.length > 0) {
      this.queue = messages.concat(this.queue);
      this.timer = setTimeout(() => this.flush(log), Math.max(this.deps.gatherMs, this.windowStart + 1_000 - Date.now()));
    }
  }
}
