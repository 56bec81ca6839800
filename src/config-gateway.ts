// The gateway's configuration (docs/realtime.md, "Limits"), read by config.ts.

const DAY_MS = 24 * 60 * 60 * 1000;

/** The gateway's timings and limits (docs/realtime.md, "Limits"); each has a PARLEY_WS_* variable. */
export interface GatewayConfig {
  /** The first frame (auth) must arrive within this (PARLEY_WS_AUTH_TIMEOUT_MS); else close 4001. */
  authTimeoutMs: number;
  /** The ping interval told to clients in `hello` (PARLEY_WS_HEARTBEAT_MS). */
  heartbeatMs: number;
  /** A connection silent this long is closed (PARLEY_WS_IDLE_TIMEOUT_MS). */
  idleTimeoutMs: number;
  /** Open connections per user (PARLEY_WS_CONNECTIONS_PER_USER), per app (PARLEY_WS_CONNECTIONS_PER_APP), on this node (PARLEY_WS_CONNECTIONS_PER_NODE). */
  connectionsPerUser: number;
  connectionsPerApp: number;
  connectionsPerNode: number;
  /** Frames a second a client may send (PARLEY_WS_FRAMES_PER_SECOND); beyond, close 4008. */
  framesPerSecond: number;
  /** The largest frame a client may send, in bytes (PARLEY_WS_MAX_FRAME_BYTES). */
  maxFrameBytes: number;
  /** A reader with more than this unsent is cut, and resumes (PARLEY_WS_MAX_BUFFERED_BYTES). */
  maxBufferedBytes: number;
  /** At most one typing_started per user and conversation this often (PARLEY_WS_TYPING_THROTTLE_MS). */
  typingThrottleMs: number;
  /** A typing_started ends by itself after this (PARLEY_WS_TYPING_EXPIRY_MS). */
  typingExpiryMs: number;
  /** Typing is not fanned out in groups with more members (PARLEY_WS_TYPING_MAX_GROUP). */
  typingMaxGroupSize: number;
  /** A user with no connection left goes offline after this (PARLEY_WS_PRESENCE_GRACE_MS). */
  presenceGraceMs: number;
  /** Presence frames go to at most this many friends and group members (PARLEY_WS_PRESENCE_FANOUT). */
  presenceFanout: number;
  /** users.last_active_at is written at most this often per user (PARLEY_WS_LAST_ACTIVE_MS). */
  lastActiveEveryMs: number;
  /** A resume replays at most this many events; beyond, resync_required (PARLEY_WS_RESUME_MAX_EVENTS). */
  resumeMaxEvents: number;
  /** Every connected token is checked again this often, beside the revocation signals (PARLEY_WS_TOKEN_RECHECK_MS). */
  tokenRecheckMs: number;
}

export const DEFAULT_GATEWAY: GatewayConfig = {
  authTimeoutMs: 5_000,
  heartbeatMs: 25_000,
  idleTimeoutMs: 35_000,
  connectionsPerUser: 50,
  connectionsPerApp: 10_000,
  connectionsPerNode: 100_000,
  framesPerSecond: 20,
  maxFrameBytes: 16 * 1024,
  maxBufferedBytes: 4 * 1024 * 1024,
  typingThrottleMs: 3_000,
  typingExpiryMs: 8_000,
  typingMaxGroupSize: 1_000,
  presenceGraceMs: 30_000,
  presenceFanout: 1_000,
  lastActiveEveryMs: 60_000,
  resumeMaxEvents: 10_000,
  tokenRecheckMs: 30_000,
};

/** Each setting's variable and its bounds. */
export const GATEWAY_VARS: Record<keyof GatewayConfig, [string, number, number]> = {
  authTimeoutMs: ['PARLEY_WS_AUTH_TIMEOUT_MS', 10, 60_000],
  heartbeatMs: ['PARLEY_WS_HEARTBEAT_MS', 10, 600_000],
  idleTimeoutMs: ['PARLEY_WS_IDLE_TIMEOUT_MS', 10, 3_600_000],
  connectionsPerUser: ['PARLEY_WS_CONNECTIONS_PER_USER', 1, 10_000],
  connectionsPerApp: ['PARLEY_WS_CONNECTIONS_PER_APP', 1, 10_000_000],
  connectionsPerNode: ['PARLEY_WS_CONNECTIONS_PER_NODE', 1, 10_000_000],
  framesPerSecond: ['PARLEY_WS_FRAMES_PER_SECOND', 1, 10_000],
  maxFrameBytes: ['PARLEY_WS_MAX_FRAME_BYTES', 256, 1024 * 1024],
  maxBufferedBytes: ['PARLEY_WS_MAX_BUFFERED_BYTES', 1024, 1024 * 1024 * 1024],
  typingThrottleMs: ['PARLEY_WS_TYPING_THROTTLE_MS', 0, 600_000],
  typingExpiryMs: ['PARLEY_WS_TYPING_EXPIRY_MS', 10, 600_000],
  typingMaxGroupSize: ['PARLEY_WS_TYPING_MAX_GROUP', 0, 10_000_000],
  presenceGraceMs: ['PARLEY_WS_PRESENCE_GRACE_MS', 0, DAY_MS],
  presenceFanout: ['PARLEY_WS_PRESENCE_FANOUT', 0, 1_000_000],
  lastActiveEveryMs: ['PARLEY_WS_LAST_ACTIVE_MS', 1_000, DAY_MS],
  resumeMaxEvents: ['PARLEY_WS_RESUME_MAX_EVENTS', 1, 10_000_000],
  tokenRecheckMs: ['PARLEY_WS_TOKEN_RECHECK_MS', 100, DAY_MS],
};
