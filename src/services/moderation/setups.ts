import type { Logger } from '../../domain/context.js';
import type { ModerationMatcher } from '../../domain/moderation/matcher.js';
import type { KeywordList, ModerationRule } from '../../domain/moderation/rules.js';
import type { HookSettings } from './hook-client.js';

/** An app's moderation set-up as stored: what a node compiles (RulesService.setup, the hook). */
export interface StoredSetup {
  version: string;
  rules: ModerationRule[];
  lists: KeywordList[];
  hook: HookSettings | undefined;
}

/** An app's moderation set-up, compiled: what every send of the app is moderated with. */
export interface CompiledSetup {
  version: string;
  matcher: ModerationMatcher;
  /** The moderation hook, when the app has one enabled. */
  hook: HookSettings | undefined;
}

interface Entry {
  setup: CompiledSetup;
  /** When its version was last read (now()). */
  checkedAt: number;
  /** Another node may have changed it (a NOTIFY, or the listen connection came back). */
  suspect: boolean;
}

/**
 * Each app's compiled moderation set-up, kept by this node (docs/moderation.md): a send is
 * moderated with no database round trip. The set-up is compiled when first needed and again when
 * its version moves: a change on this node drops its copy at once (invalidate, after the change
 * commits); a change on another node reaches this one through PostgreSQL's NOTIFY, which marks
 * every copy suspect (suspectAll: the next send of each app reads its version, one key lookup,
 * and compiles again only if it moved); and a copy is trusted for `recheckMs` at most, should a
 * NOTIFY be lost while the listening connection is down. Bounded by `maxBytes` of compiled
 * matchers (least recently used out). Concurrent misses of one app share one load.
 */
export class ModerationSetups {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<CompiledSetup>>();
  /** Moved by each invalidate, so a load begun before a change does not keep its stale result. */
  private readonly generations = new Map<string, number>();
  private bytes = 0;

  constructor(
    private readonly deps: {
      load: (appId: string) => Promise<StoredSetup>;
      version: (appId: string) => Promise<string>;
      compile: (rules: readonly ModerationRule[], lists: readonly KeywordList[]) => ModerationMatcher;
      maxBytes: number;
      recheckMs: number;
      now?: () => number;
      /** Hears other nodes' changes (PostgreSQL's LISTEN; absent on the embedded database, one process's alone). */
      listen?: (onNotify: () => void, log: Logger) => Promise<() => Promise<void>>;
    },
  ) {}

  private stopListening: (() => Promise<void>) | undefined;

  /** Starts hearing other nodes' changes (the server calls it; a process that only answers this node's requests needs not). */
  async start(log: Logger): Promise<void> {
    if (this.deps.listen && !this.stopListening) this.stopListening = await this.deps.listen(() => this.suspectAll(), log);
  }

  async stop(): Promise<void> {
    const stop = this.stopListening;
    this.stopListening = undefined;
    await stop?.();
  }

  /** The app's compiled set-up, as it stands now. */
  async get(appId: string): Promise<CompiledSetup> {
    const entry = this.entries.get(appId);
    const now = this.now();
    if (entry && !entry.suspect && now - entry.checkedAt < this.deps.recheckMs) {
      // Least recently used last.
      this.entries.delete(appId);
      this.entries.set(appId, entry);
      return entry.setup;
    }
    const pending = this.loading.get(appId);
    if (pending) return pending;
    const load: Promise<CompiledSetup> = this.refresh(appId, entry).finally(() => {
      // Not a newer load's, begun after an invalidate dropped this one.
      if (this.loading.get(appId) === load) this.loading.delete(appId);
    });
    this.loading.set(appId, load);
    return load;
  }

  /** The app's set-up changed on this node (after its transaction committed): compiled again when next needed. */
  invalidate(appId: string): void {
    this.generations.set(appId, (this.generations.get(appId) ?? 0) + 1);
    this.loading.delete(appId);
    this.drop(appId);
  }

  /** Another node may have changed any app's set-up: each is checked against its version when next needed. */
  suspectAll(): void {
    for (const entry of this.entries.values()) entry.suspect = true;
  }

  /** How many set-ups and compiled bytes this node keeps. */
  get size(): { apps: number; bytes: number } {
    return { apps: this.entries.size, bytes: this.bytes };
  }

  private async refresh(appId: string, entry: Entry | undefined): Promise<CompiledSetup> {
    const generation = this.generations.get(appId) ?? 0;
    const startedAt = this.now();
    if (entry && (await this.deps.version(appId)) === entry.setup.version) {
      entry.checkedAt = startedAt;
      entry.suspect = false;
      return entry.setup;
    }
    const stored = await this.deps.load(appId);
    const setup: CompiledSetup = {
      version: stored.version,
      matcher: this.deps.compile(stored.rules, stored.lists),
      hook: stored.hook?.enabled ? stored.hook : undefined,
    };
    // A change committed meanwhile: this result may predate it, so it answers this call only.
    if ((this.generations.get(appId) ?? 0) === generation) this.keep(appId, { setup, checkedAt: startedAt, suspect: false });
    return setup;
  }

  private keep(appId: string, entry: Entry): void {
    this.drop(appId);
    this.entries.set(appId, entry);
    this.bytes += entry.setup.matcher.bytes;
    for (const [oldest, old] of this.entries) {
      if (this.bytes <= this.deps.maxBytes || oldest === appId) break;
      this.entries.delete(oldest);
      this.bytes -= old.setup.matcher.bytes;
    }
  }

  private drop(appId: string): void {
    const old = this.entries.get(appId);
    if (!old) return;
    this.entries.delete(appId);
    this.bytes -= old.setup.matcher.bytes;
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }
}
