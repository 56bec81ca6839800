import type { Logger, RequestContext } from '../../domain/context.js';
import type { AuthTokensService } from '../auth-tokens.service.js';
import type { GatewayBus } from './bus.js';
import { CLOSE, type GatewayConnection } from './frames.js';
import type { GatewayHub } from './hub.js';
import type { Presence } from './presence.js';
import type { Revocations } from './revocations.js';
import type { Typing } from './typing.js';

/**
 * The gateway's one entry for its transports (the WebSocket route and the SSE fallback,
 * docs/realtime.md): authenticate a client's token, attach its connection, its typing frames;
 * and the gateway's life: started with the server, stopped at its shutdown (every connection
 * closed with 1012, so clients reconnect elsewhere and resume).
 */
export class Gateway {
  private recheckTimer: NodeJS.Timeout | undefined;
  private started = false;

  constructor(
    private readonly deps: {
      authTokens: AuthTokensService;
      hub: GatewayHub;
      /** Throws AUTH_ERR_INVALID_APPID unless the app is one this deployment serves (a connection names its app before it authenticates). */
      requireApp: (appId: string) => Promise<void>;
      bus: GatewayBus;
      typing: Typing;
      presence: Presence;
      revocations: Revocations;
      /** Every connection's token is checked again this often, beside the revocation signals. */
      tokenRecheckMs: number;
      log: Logger;
    },
  ) {
    // A revocation here reaches every node; each checks its own connections of that user.
    deps.revocations.onRevoked((appId, uid) => deps.bus.publish({ k: 'revoked', app: appId, uid }, deps.log));
    deps.bus.onMessage((message) => {
      if (message.k === 'revoked') void deps.hub.recheck(message.app, message.uid, deps.log);
    });
  }

  get hub(): GatewayHub {
    return this.deps.hub;
  }

  /** Throws AUTH_ERR_INVALID_APPID unless the app exists (in this region). */
  requireApp(appId: string): Promise<void> {
    return this.deps.requireApp(appId);
  }

  /** The user a token is for (AUTH_ERR_EMPTY_AUTH_TOKEN, AUTH_ERR_AUTH_TOKEN_NOT_FOUND otherwise). */
  authenticate(ctx: RequestContext, token: string | undefined): Promise<{ uid: string; tokenHash: string }> {
    return this.deps.authTokens.authenticate(ctx, token);
  }

  /** See GatewayHub.attach; the gateway starts with its first connection. */
  async attach(conn: GatewayConnection, resumeFrom: string | undefined, log: Logger): Promise<() => void> {
    await this.start(log);
    return this.deps.hub.attach(conn, resumeFrom, log);
  }

  typingStarted(conn: GatewayConnection, receiver: string, receiverType: 'user' | 'group'): Promise<void> {
    return this.deps.typing.started(conn.appId, conn.uid, receiver, receiverType);
  }

  typingEnded(conn: GatewayConnection, receiver: string, receiverType: 'user' | 'group'): void {
    this.deps.typing.ended(conn.appId, conn.uid, receiver, receiverType);
  }

  /** Hears other nodes, keeps presence, checks tokens again now and then. */
  async start(log: Logger): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.deps.bus.start(log);
    this.deps.presence.start();
    this.recheckTimer = setInterval(() => {
      for (const appId of this.deps.hub.appIds()) void this.deps.hub.recheck(appId, undefined, log);
    }, this.deps.tokenRecheckMs);
    this.recheckTimer.unref();
  }

  /** The shutdown: every connection closed with 1012 (reconnect elsewhere), presence settled, the bus closed. */
  async stop(): Promise<void> {
    clearInterval(this.recheckTimer);
    this.recheckTimer = undefined;
    this.deps.hub.closeAll(CLOSE.restarting, 'server restarting');
    await this.deps.presence.stop();
    await this.deps.bus.stop();
    this.started = false;
  }
}
