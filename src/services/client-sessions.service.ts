import type { RequestContext } from '../domain/context.js';
import { badRequest } from '../domain/errors.js';
import { extended } from '../domain/objects.js';
import type { ActorContext } from './actor.js';
import type { AuthTokensService } from './auth-tokens.service.js';
import type { UsersService } from './users.service.js';
import type { User } from './views/users.view.js';

/**
 * Where a client finds Parley (docs/client-api.md, "Settings"): the hosts it was reached at,
 * Parley's version, and its real-time endpoints, so that a client that asked for them keeps
 * talking to this deployment.
 */
export interface ClientSettings {
  appId: string;
  region: string;
  parley: { version: string };
  hosts: { api: string; websocket: string };
  /** The REST base path; `/v3.0` serves the same. */
  apiPath: string;
  websocket: { path: string; subprotocol: string };
  events: { path: string };
}

/** What a device says of itself when its user logs in (PUT /v3/me). */
export interface ClientLogin {
  platform?: string;
  deviceId?: string;
  appInfo?: Record<string, unknown>;
  userAgent?: string;
}

/**
 * The REST half of a client SDK's session (docs/client-api.md): the login call that answers
 * the user with the settings, the settings alone, and the session's start. The actor is the
 * token's user (or an API key's onBehalfOf user).
 */
export class ClientSessionsService {
  constructor(
    private readonly deps: {
      users: Pick<UsersService, 'get' | 'withActor'>;
      authTokens: Pick<AuthTokensService, 'describe'>;
      region: string;
      version: string;
    },
  ) {}

  /**
   * PUT /v3/me: the user, with the settings and no `jwt` (no socket is issued one). With an auth
   * token, the token's platform, user agent and app info are what the device says (as
   * update-authtoken sets them); the device id is not stored.
   */
  async login(ctx: RequestContext, input: ClientLogin, host: string): Promise<User & { settings: ClientSettings }> {
    const actor = await this.requireActor(ctx);
    if (ctx.credential?.kind === 'authToken') {
      await this.deps.authTokens.describe(ctx, ctx.credential.keyHash, { platform: input.platform, userAgent: input.userAgent, appInfo: input.appInfo });
    }
    const user = await this.deps.users.get(actor, actor.onBehalfOf!);
    return extended(user, { settings: this.settings(ctx, host) });
  }

  /** GET /v3/settings, and the login's `settings`. `host` is the Host the request was sent to. */
  settings(ctx: RequestContext, host: string): ClientSettings {
    return {
      appId: ctx.appId,
      region: this.deps.region,
      parley: { version: this.deps.version },
      hosts: { api: host, websocket: host },
      apiPath: '/v3',
      websocket: { path: '/v3/ws', subprotocol: 'parley.v1' },
      events: { path: '/v3/me/events' },
    };
  }

  /**
   * POST /v3/user_sessions: a client reports that its session started. Accepted for the vendor's
   * SDK; Parley records nothing of it (presence comes from the real-time connections).
   */
  async startSession(ctx: RequestContext): Promise<{ uid: string; success: true }> {
    const actor = await this.requireActor(ctx);
    return { uid: actor.onBehalfOf!, success: true };
  }

  /** The actor: the token's user, or the onBehalfOf user of an API key (required). */
  private async requireActor(ctx: RequestContext): Promise<ActorContext> {
    if (ctx.onBehalfOf === undefined) throw badRequest({ onBehalfOf: 'is required with an apiKey: it names the user (or send the authToken header instead)' });
    return this.deps.users.withActor(ctx);
  }
}
