import { secondsUntilEnd, windowEndSeconds, type AppClass, type RateLimitClass, type UserClass } from '../domain/rate-limits.js';

/**
 * One request's count against its limits: what it is counted against (set by the caller), and
 * the counts the counters answer. One object per counted request, of one shape.
 */
export class RateLimitHit {
  /** Requests of the window counted against the app's class, this one included when it passed. */
  appCount = 0;
  /** The same against the user's class. */
  userCount = 0;
  /** 0: counted; 1: refused by the app's class; 2: refused by the user's class. Refused requests are not counted. */
  refusedBy: 0 | 1 | 2 = 0;

  constructor(
    readonly appId: string,
    readonly cls: AppClass,
    /** The class's limit; 0: off, not counted. */
    readonly limit: number,
    readonly userClass: UserClass | undefined,
    readonly uid: string | undefined,
    /** The user class's limit; 0: off or no user, not counted. */
    readonly userLimit: number,
    readonly window: number,
    readonly nowMs: number,
  ) {}

  /**
   * Whose numbers the response shows: the app class's, but the user's when the user's limit
   * refused the request, or when the app's class is off.
   */
  get reportsUser(): boolean {
    return this.refusedBy === 2 || (this.limit === 0 && this.refusedBy === 0);
  }

  get reportedLimit(): number {
    return this.reportsUser ? this.userLimit : this.limit;
  }

  get reportedRemaining(): number {
    return this.reportsUser ? Math.max(0, this.userLimit - this.userCount) : Math.max(0, this.limit - this.appCount);
  }

  /** The end of the window, in unix seconds. */
  get reset(): number {
    return windowEndSeconds(this.window);
  }

  /** Whole seconds until the window ends, at least 1. */
  get retryAfter(): number {
    return secondsUntilEnd(this.window, this.nowMs);
  }
}

/** Requests counted in one window, per class (the user classes for one user). */
export type RateLimitCounts = Record<RateLimitClass, number>;

/** An event counted under a key of its own (a client address, an app's failed authentications). */
export interface KeyHit {
  /** The key's count in the window: after this event, or as it stood when it was refused. */
  count: number;
  /** The count had reached the limit: this event was not counted. */
  refused: boolean;
}

/**
 * Where the requests of each window are counted: in this process, or in Redis for several
 * nodes. `hit` decides and counts in one step: when the app's class or the user's class is
 * already at its limit, the request is refused and counts nowhere; otherwise it counts in both.
 */
export interface RateLimitCounters {
  /** Fills in the hit's counts and verdict: at once (memory), or when Redis has answered. */
  hit(hit: RateLimitHit): RateLimitHit | Promise<RateLimitHit>;
  /** The counts of a window, without counting: the app's classes, and the user's when `uid` is given. */
  read(appId: string, window: number, uid: string | undefined): Promise<RateLimitCounts>;
  /** Counts one event under `key` in `window`, unless its count has reached `limit` (> 0). */
  hitKey(key: string, limit: number, window: number, nowMs: number): KeyHit | Promise<KeyHit>;
  /** The count under `key` in `window`, counting nothing. */
  readKey(key: string, window: number): number | Promise<number>;
  close(): Promise<void>;
}

/**
 * At most this many keys are counted apart in a window in memory; beyond them, new keys of the
 * window share one count, so a flood of distinct keys (addresses) is bounded in memory and still
 * limited, together.
 */
export const MAX_COUNTED_KEYS = 100_000;
const OVERFLOW_KEY = '\u0000overflow';

class AppCounts {
  window = -1;
  core = 0;
  standard = 0;
  import = 0;
  /** Per uid, this window only. */
  users: Map<string, UserCounts> | undefined = undefined;
}

class UserCounts {
  send_per_user = 0;
  unread_per_user = 0;
}

/**
 * Counters in this process's memory: one node's. A hit is a few property reads and writes on
 * the app's entry, with no allocation once the app and user have theirs for the window. An
 * app's per-user entries are dropped when its window turns, so memory holds one minute's users.
 */
export class MemoryRateLimitCounters implements RateLimitCounters {
  private readonly apps = new Map<string, AppCounts>();
  /** The keyed counts of one window: dropped whole when the window turns. */
  private keyed = new Map<string, number>();
  private keyedWindow = -1;

  hit(hit: RateLimitHit): RateLimitHit {
    const app = this.appCounts(hit.appId, hit.window);
    const appOn = hit.limit > 0;
    const user = hit.userLimit > 0 && hit.userClass !== undefined && hit.uid !== undefined ? this.userCounts(app, hit.uid) : undefined;
    const appCount = appOn ? app[hit.cls] : 0;
    const userCount = user === undefined ? 0 : user[hit.userClass!];
    hit.appCount = appCount;
    hit.userCount = userCount;
    if (appOn && appCount >= hit.limit) hit.refusedBy = 1;
    else if (user !== undefined && userCount >= hit.userLimit) hit.refusedBy = 2;
    else {
      if (appOn) hit.appCount = ++app[hit.cls];
      if (user !== undefined) hit.userCount = ++user[hit.userClass!];
    }
    return hit;
  }

  read(appId: string, window: number, uid: string | undefined): Promise<RateLimitCounts> {
    const app = this.apps.get(appId);
    const current = app !== undefined && app.window === window ? app : undefined;
    const user = uid === undefined ? undefined : current?.users?.get(uid);
    return Promise.resolve({
      core: current?.core ?? 0,
      standard: current?.standard ?? 0,
      import: current?.import ?? 0,
      send_per_user: user?.send_per_user ?? 0,
      unread_per_user: user?.unread_per_user ?? 0,
    });
  }

  hitKey(key: string, limit: number, window: number): KeyHit {
    const counts = this.keyedCounts(window);
    const counted = counts.has(key) || counts.size < MAX_COUNTED_KEYS ? key : OVERFLOW_KEY;
    const count = counts.get(counted) ?? 0;
    if (count >= limit) return { count, refused: true };
    counts.set(counted, count + 1);
    return { count: count + 1, refused: false };
  }

  readKey(key: string, window: number): number {
    const counts = this.keyedCounts(window);
    return counts.get(key) ?? (counts.size >= MAX_COUNTED_KEYS ? (counts.get(OVERFLOW_KEY) ?? 0) : 0);
  }

  close(): Promise<void> {
    this.apps.clear();
    this.keyed.clear();
    return Promise.resolve();
  }

  private keyedCounts(window: number): Map<string, number> {
    if (window > this.keyedWindow) {
      this.keyedWindow = window;
      this.keyed = new Map();
    }
    return this.keyed;
  }

  /** The app's counts for `window`, started afresh when its window has turned. */
  private appCounts(appId: string, window: number): AppCounts {
    let app = this.apps.get(appId);
    if (app === undefined) {
      app = new AppCounts();
      this.apps.set(appId, app);
    }
    // A later window starts from zero; a request that read the clock just before the turn
    // counts in the new window (it cannot go back).
    if (window > app.window) {
      app.window = window;
      app.core = 0;
      app.standard = 0;
      app.import = 0;
      app.users = undefined;
    }
    return app;
  }

  private userCounts(app: AppCounts, uid: string): UserCounts {
    app.users ??= new Map();
    let user = app.users.get(uid);
    if (user === undefined) {
      user = new UserCounts();
      app.users.set(uid, user);
    }
    return user;
  }
}
