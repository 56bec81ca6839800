import { silentLogger, type Logger } from '../domain/context.js';
import type { EventRow, EventsRepository } from '../repositories/events.repository.js';
import type { EventPayloads, RenderedEvent } from './event-payloads.js';

/** The log still this long: the feed polls at its idle pace. */
const QUIET_MS = 1_000;

/** Events read (and rendered) at a time: by a catch-up, and by the feed per app group. */
const PAGE = 500;

/**
 * A reader of one app's events (a live stream): `send` gets them in id order, each once, those
 * of one advance of the feed (or one page of a catch-up) in one call, so that a stream writes
 * them to its socket at once.
 */
export interface Subscriber {
  appId: string;
  /** Only these triggers (all when absent). */
  triggers?: ReadonlySet<string>;
  send(events: RenderedEvent[]): void;
  /**
   * A catch-up hands the reader a page at a time, and reads the next once this resolves (a
   * stream: once its socket has taken what it was given), so it never holds more than a page
   * rendered and unsent. Live events are handed without waiting.
   */
  drained?(): Promise<void> | undefined;
  /** Aborted when the reader has gone: its catch-up stops before its next read or render, and it is removed. */
  signal?: AbortSignal;
}

/**
 * Where a reader starting now starts (see startPoint): after the safe id, less the events above
 * it that belong to transactions committed by then.
 */
export interface StartPoint {
  safeId: bigint;
  /** The last event id drawn when `committed` was taken: no event above it was committed then. */
  lastId: bigint;
  /** The transactions committed then. */
  committed: CommittedSnapshot;
}

/** A snapshot's committed transactions: all below `xmin`, and those below `xmax` not `running`. */
interface CommittedSnapshot {
  xmin: bigint;
  xmax: bigint;
  running: ReadonlySet<bigint>;
}

interface Subscription extends Subscriber {
  /** The last event id handed to `send` (or skipped by the trigger filter). */
  cursor: bigint;
  live: boolean;
  closed: boolean;
  /** A reader started at a StartPoint: the events up to its `lastId` committed before it, which it skips. */
  before?: StartPoint;
}

function committedIn(snapshot: CommittedSnapshot, tx: bigint): boolean {
  return tx < snapshot.xmin || (tx < snapshot.xmax && !snapshot.running.has(tx));
}

/**
 * The feed of the event log to the readers of this process (docs/events.md). The log's order is
 * the order of its ids, but a transaction still running may hold an id lower than events
 * already committed. So the feed hands out only events up to the **safe id**: every transaction
 * that could have drawn an id at or below it has ended, so no event at or below it can still
 * appear. Each poll reads where the log stands (EventsRepository.position): the last id drawn
 * and the snapshot's transactions; an id drawn before one poll is safe once a later poll sees
 * every transaction that had started by the next poll ended (each transaction takes its id
 * before drawing an event's). Polling the log itself is how a change committed by another
 * process reaches this one.
 *
 * A new reader catches up from the log (after its Last-Event-ID, or from a StartPoint) up to
 * the safe id, a page at a time as it takes them and only while it is there, then gets the
 * events of each advance with the others, rendered once for all.
 */
export class EventFeed {
  private readonly subscriptions = new Set<Subscription>();
  /** Ids drawn by a poll, with the next poll's xmax once known: safe when xmin reaches it. */
  private readonly pending: Array<{ lastId: bigint; xmax?: bigint }> = [];
  private safe: bigint | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private polling: Promise<void> | undefined;
  /** Polls in a row that found the log where the one before left it, everything handed out. */
  private quietPolls = 0;
  private lastSeen: string | undefined;
  private readonly waiters: Array<() => void> = [];
  private readonly advanceListeners: Array<(safeId: bigint) => void> = [];
  private intervalMs = 25;
  /** Polls still to come at once after a wake from idle (see wake). */
  private quickPolls = 0;
  private unlisten: Promise<() => Promise<void>> | undefined;
  private log: Logger = silentLogger;

  /**
   * `pollMs`: how often the log is read while the feed runs (from its first reader until the app
   * closes) and the log moves; `idlePollMs`: how often once it has not moved for a second (an
   * idle server then reads it a few times a second, not forty). `listen`, where other processes
   * can signal a commit (PostgreSQL's LISTEN): called while the feed runs with a function that
   * wakes it; answers the function that stops listening.
   */
  constructor(
    private readonly deps: {
      events: EventsRepository;
      payloads: EventPayloads;
      pollMs: number;
      idlePollMs: number;
      listen?: (wake: () => void, log: Logger) => Promise<() => Promise<void>>;
    },
  ) {}

  /** The highest id of the log that can be handed out now, once known. */
  get safeId(): bigint | undefined {
    return this.safe;
  }

  /** Calls `listener` with the safe id each time it moves on (the webhook fan-out reads up to it). */
  onAdvance(listener: (safeId: bigint) => void): void {
    this.advanceListeners.push(listener);
  }

  /**
   * Polls every `intervalMs`, or every `idlePollMs` once the log has been still for a second (a
   * failed poll is logged and tried again); started by the first reader. Woken (see wake), it
   * polls at once and at `intervalMs` again.
   */
  start(intervalMs: number, log: Logger): void {
    if (this.running) return;
    this.running = true;
    this.intervalMs = intervalMs;
    this.log = log;
    this.unlisten = this.deps
      .listen?.(() => this.wake(), log)
      .catch((error: unknown) => {
        log.warn({ err: error }, 'the event feed could not listen for other processes’ commits; it polls');
        return async () => undefined;
      });
    void this.tick();
  }

  /**
   * A commit may have added events (this process answered a write, or another process signalled
   * one): an idle feed polls at once, and at its active pace again. The log stays the source;
   * a wake only shortens the wait for the next poll (after a quiet spell, up to `idlePollMs`).
   */
  wake(): void {
    if (!this.running) return;
    const idle = this.quietPolls >= this.quietAfter();
    // At the active pace for a second again (the polls that follow see later commits). A poll
    // running now counts from here, so the next comes at the active pace too.
    this.quietPolls = 0;
    if (this.polling || !idle) return;
    // From idle, the poll after the next one comes at once too: on a quiet database two polls
    // make an event safe (none running at the second), so it goes out in a few milliseconds
    // instead of one active interval later. (Only from idle: an active feed keeps its pace.)
    this.quickPolls = 1;
    clearTimeout(this.timer);
    void this.tick();
  }

  /** Polls in a row that found the log still, after which the feed polls at its idle pace. */
  private quietAfter(): number {
    return Math.ceil(QUIET_MS / this.intervalMs);
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    this.polling = this.poll().catch((error: unknown) => this.log.warn({ err: error }, 'the event feed could not read the log'));
    await this.polling;
    this.polling = undefined;
    if (!this.running || this.timer !== undefined) return;
    const pace = this.quickPolls > 0 ? 0 : this.quietPolls >= this.quietAfter() ? this.deps.idlePollMs : this.intervalMs;
    if (this.quickPolls > 0) this.quickPolls--;
    this.timer = setTimeout(() => void this.tick(), pace);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.polling;
    const unlisten = await this.unlisten;
    this.unlisten = undefined;
    await unlisten?.();
    for (const subscription of this.subscriptions) subscription.closed = true;
    this.subscriptions.clear();
  }

  /**
   * The safe id once known (the feed started if it was not). Every event committed after this
   * answers is above it (one committed later with a lower id would have been running, and the
   * id not safe); but events above it may have been committed before: a reader that must start
   * after those too starts at startPoint.
   */
  async ready(log: Logger): Promise<bigint> {
    this.start(this.deps.pollMs, log);
    return this.safeIdKnown();
  }

  /**
   * Where a reader starting now starts (a stream without Last-Event-ID, taken before it answers
   * its client): after every event committed now, and before every event committed later. The
   * safe id lags behind the log (a poll or two, or a long transaction), so events above it may
   * be committed already: each event carries its transaction (`events.tx`), and the reader skips
   * those whose transaction the snapshot taken here saw committed.
   */
  async startPoint(log: Logger): Promise<StartPoint> {
    const safeId = await this.ready(log);
    const position = await this.deps.events.startPosition();
    const { xmin, xmax, running } = position.committed;
    return { safeId, lastId: BigInt(position.lastId), committed: { xmin: BigInt(xmin), xmax: BigInt(xmax), running: new Set(running.map(BigInt)) } };
  }

  /**
   * Adds a reader: after the event `from` names (a Last-Event-ID: catching up from the log), or
   * from a StartPoint (taken now when absent). Answers the function that removes it (aborting
   * the subscriber's signal removes it too).
   */
  async subscribe(subscriber: Subscriber, from: string | StartPoint | undefined, log: Logger): Promise<() => void> {
    this.start(this.deps.pollMs, log);
    const subscription: Subscription = { appId: subscriber.appId, send: subscriber.send, cursor: 0n, live: false, closed: false };
    if (subscriber.triggers) subscription.triggers = subscriber.triggers;
    const signal = subscriber.signal;
    const remove = () => {
      subscription.closed = true;
      this.subscriptions.delete(subscription);
      signal?.removeEventListener('abort', remove);
    };
    if (signal?.aborted) {
      remove();
      return remove;
    }
    signal?.addEventListener('abort', remove);
    this.subscriptions.add(subscription);
    const start = from ?? (await this.startPoint(log));
    if (typeof start === 'string') {
      subscription.cursor = BigInt(start);
    } else {
      subscription.cursor = start.safeId;
      if (start.lastId > start.safeId) subscription.before = start;
    }
    // Catch up from the log until the safe id stops moving under the reader; then it is live
    // (at once, with nothing awaited between the check and the switch). Each page is read,
    // rendered and handed only while the reader is there, and the next waits for it to drain.
    for (;;) {
      if (subscription.closed) return remove;
      const upTo = await this.safeIdKnown();
      const rows = subscription.cursor < upTo ? await this.deps.events.listAfter(subscription.appId, String(subscription.cursor), PAGE, String(upTo)) : [];
      if (subscription.closed) return remove;
      if (rows.length > 0) {
        const events = await this.deps.payloads.render(rows);
        if (subscription.closed) return remove;
        this.deliver(subscription, events, rows);
        await subscriber.drained?.();
        if (rows.length === PAGE) continue;
      }
      if (subscription.cursor < upTo) subscription.cursor = upTo;
      if (this.safe === upTo) {
        subscription.live = true;
        return remove;
      }
    }
  }

  /** One poll: where the log stands, the safe id moved on, and the events up to it handed to the live readers. */
  async poll(): Promise<void> {
    const position = await this.deps.events.position();
    this.quietPolls = position.lastId === this.lastSeen && this.safe === BigInt(position.lastId) ? this.quietPolls + 1 : 0;
    this.lastSeen = position.lastId;
    const xmin = BigInt(position.xmin);
    const last = this.pending[this.pending.length - 1];
    if (last && last.xmax === undefined) last.xmax = BigInt(position.xmax);
    this.pending.push({ lastId: BigInt(position.lastId) });
    let safe = this.safe;
    while (this.pending[0]?.xmax !== undefined && this.pending[0].xmax <= xmin) {
      const { lastId } = this.pending.shift()!;
      if (safe === undefined || lastId > safe) safe = lastId;
    }
    if (safe === undefined || safe === this.safe) return;
    const from = this.safe;
    this.safe = safe;
    for (const listener of this.advanceListeners) listener(safe);
    if (from !== undefined) await this.handOut(from, safe);
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** The events in (from, to] of the apps with live readers, to those readers. */
  private async handOut(from: bigint, to: bigint): Promise<void> {
    const apps = [...new Set([...this.subscriptions].filter((s) => s.live).map((s) => s.appId))];
    let after = from;
    while (apps.length > 0) {
      const rows = await this.deps.events.listBetween(apps, String(after), String(to), PAGE);
      if (rows.length === 0) return;
      const byApp = new Map<string, RenderedEvent[]>();
      for (const event of await this.deps.payloads.render(rows)) {
        const own = byApp.get(event.appId);
        if (own) own.push(event);
        else byApp.set(event.appId, [event]);
      }
      for (const subscription of this.subscriptions) {
        if (!subscription.live || subscription.closed) continue;
        this.deliver(subscription, byApp.get(subscription.appId) ?? [], rows);
      }
      after = BigInt(rows[rows.length - 1]!.id);
      if (rows.length < PAGE) return;
    }
  }

  /**
   * Hands `events` (rendered from `rows`) to the reader, in order, skipping what it had and, for
   * a reader started at a StartPoint, what was committed before it started; its cursor moves
   * past `rows`.
   */
  private deliver(subscription: Subscription, events: RenderedEvent[], rows: EventRow[]): void {
    const before = subscription.before;
    const committedBefore = before && new Set(rows.filter((row) => BigInt(row.id) <= before.lastId && row.tx !== undefined && committedIn(before.committed, BigInt(row.tx))).map((row) => row.id));
    const sent: RenderedEvent[] = [];
    for (const event of events) {
      const id = BigInt(event.id);
      if (id <= subscription.cursor) continue;
      if ((!subscription.triggers || subscription.triggers.has(event.trigger)) && !committedBefore?.has(event.id)) sent.push(event);
      subscription.cursor = id;
    }
    const last = rows[rows.length - 1];
    if (last && BigInt(last.id) > subscription.cursor) subscription.cursor = BigInt(last.id);
    if (before && subscription.cursor >= before.lastId) delete subscription.before;
    if (sent.length > 0) subscription.send(sent);
  }

  /** The safe id, once the feed has polled enough to know one. */
  private async safeIdKnown(): Promise<bigint> {
    while (this.safe === undefined) await new Promise<void>((resolve) => this.waiters.push(resolve));
    return this.safe;
  }
}
