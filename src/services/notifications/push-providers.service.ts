import { extended } from '../../domain/objects.js';
import type { Kysely } from 'kysely';
import { UniqueViolation } from '../../db/driver-errors.js';
import type { DB } from '../../db/schema.js';
import { withTransaction, type Tx } from '../../db/transaction.js';
import type { RequestContext } from '../../domain/context.js';
import { AppError, badRequest, type ErrorDetails } from '../../domain/errors.js';
import {
  checkApnsFields,
  checkedProviderId,
  checkFilename,
  checkServiceAccount,
  DEFAULT_NOTIFICATION_IN_PAYLOAD,
  mergeNotificationInPayload,
  PUSH_PROVIDER_LIMITS,
  secretContext,
  summarizeServiceAccount,
  type ApnsFieldsInput,
  type FcmServiceAccount,
  type NotificationInPayload,
  type PushProviderKind,
  type PushProvidersForDelivery,
  type ServiceAccountSummary,
} from '../../domain/notifications/push-providers.js';
import type { SecretBox } from '../../domain/secret-box.js';
import { toUnix } from '../../domain/time.js';
import type { PushProvidersRepository, StoredApnsProvider, StoredFcmProvider } from '../../repositories/notifications/push-providers.repository.js';

type PayloadInput = Partial<Record<'ios' | 'android' | 'web', Partial<Record<'chat' | 'call', boolean>>>>;

/** add-fcm-provider's body (update-fcm-provider's too, where only providerId is required). */
export interface FcmProviderInput {
  providerId: string;
  serviceAccountFilename?: string;
  /** The service-account JSON: an object, or its text. */
  serviceAccountCreds?: unknown;
  notificationInPayload?: PayloadInput;
}

/** add-apns-provider's body (update-apns-provider's too, where only providerId is required). */
export interface ApnsProviderInput extends ApnsFieldsInput {
  providerId: string;
}

export type { ApnsDeliveryProvider, FcmDeliveryProvider, PushProvidersForDelivery } from '../../domain/notifications/push-providers.js';

/** An FCM provider as the answers show it: its service account without the private key. */
export interface FcmProviderView {
  providerId: string;
  isDefault: boolean;
  serviceAccountFilename?: string;
  serviceAccountCreds: ServiceAccountSummary;
  notificationInPayload: NotificationInPayload;
  createdAt: number;
  updatedAt: number;
}

/** An APNs provider as the answers show it: without its .p8 key. */
export interface ApnsProviderView {
  providerId: string;
  isDefault: boolean;
  keyId: string;
  teamId: string;
  bundleId: string;
  p8KeyFilename?: string;
  includeContentAvailable: boolean;
  includeMutableContent: boolean;
  productionMode: boolean;
  createdAt: number;
  updatedAt: number;
}

/** What a write answers: done, and the app's providers of that kind after it (the default among them). */
export interface ProvidersChanged<V> {
  success: true;
  pushProviders: V[];
}

const LABEL: Record<PushProviderKind, string> = { fcm: 'FCM', apns: 'APNs' };

/**
 * An app's FCM and APNs providers (docs/notifications.md, "FCM and APNs providers"): several of
 * each kind, one of each kind the default. The first provider of a kind becomes its default;
 * deleting the default makes the oldest remaining one the default (none when none is left); a
 * change of default is one transaction, in turn with the kind's other writes, so there is always
 * exactly one while there are any. Keys are checked (loaded with node:crypto) when given, and
 * sealed (SecretBox); answers never show them.
 */
export class PushProvidersService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      providers: PushProvidersRepository;
      secrets: SecretBox;
      /** PARLEY_WEBHOOK_ALLOW_PRIVATE: a service account's token_uri may be http. */
      allowPrivate?: boolean;
      /**
       * Keeps the app's notifications in step with its providers, in the transaction that changes
       * them: its fan-out starts from the log's end at its first provider, and what a channel left
       * with no provider still owes is dropped.
       */
      syncDelivery?: (appId: string, tx: Tx) => Promise<void>;
    },
  ) {}

  // -- FCM --

  async listFcm(ctx: RequestContext): Promise<{ pushProviders: FcmProviderView[] }> {
    return { pushProviders: (await this.deps.providers.listFcm(ctx.appId)).map(fcmView) };
  }

  async addFcm(ctx: RequestContext, input: FcmProviderInput): Promise<ProvidersChanged<FcmProviderView>> {
    const providerId = checkedProviderId(input.providerId);
    const problems: ErrorDetails = {};
    const account = input.serviceAccountCreds === undefined ? undefined : serviceAccountOf(input.serviceAccountCreds, problems, this.deps.allowPrivate ?? false);
    if (input.serviceAccountCreds === undefined) problems.serviceAccountCreds = 'is required';
    checkFilename(input.serviceAccountFilename, 'serviceAccountFilename', problems);
    if (Object.keys(problems).length > 0 || !account) throw badRequest(problems);
    const values = extended(this.sealedAccount(ctx, providerId, account), {
      serviceAccountFilename: input.serviceAccountFilename ?? null,
      notificationInPayload: mergeNotificationInPayload(DEFAULT_NOTIFICATION_IN_PAYLOAD, input.notificationInPayload),
    });
    return this.add(ctx, 'fcm', providerId, (tx, isDefault) => this.deps.providers.createFcm(ctx.appId, providerId, isDefault, values, tx));
  }

  /** Changes the fields given (a new service account replaces the old whole); the others are kept. */
  async updateFcm(ctx: RequestContext, input: FcmProviderInput): Promise<ProvidersChanged<FcmProviderView>> {
    const providerId = checkedProviderId(input.providerId);
    const problems: ErrorDetails = {};
    const account = input.serviceAccountCreds === undefined ? undefined : serviceAccountOf(input.serviceAccountCreds, problems, this.deps.allowPrivate ?? false);
    checkFilename(input.serviceAccountFilename, 'serviceAccountFilename', problems);
    if (Object.keys(problems).length > 0) throw badRequest(problems);
    if (input.serviceAccountCreds === undefined && input.serviceAccountFilename === undefined && input.notificationInPayload === undefined) {
      throw badRequest({ body: 'names nothing to change: give serviceAccountCreds, serviceAccountFilename or notificationInPayload' });
    }
    const sealed = account ? this.sealedAccount(ctx, providerId, account) : undefined;
    return this.change(ctx, 'fcm', 'update_fcm_provider', async (tx) => {
      const current = await this.deps.providers.getFcm(ctx.appId, providerId, tx);
      if (!current) throw notFound('fcm', providerId);
      await this.deps.providers.updateFcm(
        ctx.appId,
        providerId,
        {
          serviceAccountFilename: input.serviceAccountFilename ?? current.serviceAccountFilename,
          projectId: sealed?.projectId ?? current.projectId,
          clientEmail: sealed?.clientEmail ?? current.clientEmail,
          privateKeyId: sealed ? sealed.privateKeyId : current.privateKeyId,
          serviceAccountSealed: sealed?.serviceAccountSealed ?? current.serviceAccountSealed,
          notificationInPayload: mergeNotificationInPayload(current.notificationInPayload, input.notificationInPayload),
        },
        tx,
      );
    });
  }

  // -- APNs --

  async listApns(ctx: RequestContext): Promise<{ pushProviders: ApnsProviderView[] }> {
    return { pushProviders: (await this.deps.providers.listApns(ctx.appId)).map(apnsView) };
  }

  async addApns(ctx: RequestContext, input: ApnsProviderInput): Promise<ProvidersChanged<ApnsProviderView>> {
    const providerId = checkedProviderId(input.providerId);
    const problems: ErrorDetails = {};
    for (const field of ['keyId', 'teamId', 'bundleId', 'p8Key'] as const) if (input[field] === undefined) problems[field] = 'is required';
    const checked = checkApnsFields(input, problems);
    if (Object.keys(problems).length > 0) throw badRequest(problems);
    const values = {
      keyId: checked.keyId!,
      teamId: checked.teamId!,
      bundleId: input.bundleId!,
      p8KeyFilename: input.p8KeyFilename ?? null,
      p8KeySealed: this.deps.secrets.seal(checked.p8Key!, secretContext(ctx.appId, 'apns', providerId, 'p8Key')),
      productionMode: input.productionMode ?? false,
      includeContentAvailable: input.includeContentAvailable ?? false,
      includeMutableContent: input.includeMutableContent ?? false,
    };
    return this.add(ctx, 'apns', providerId, (tx, isDefault) => this.deps.providers.createApns(ctx.appId, providerId, isDefault, values, tx));
  }

  /** Changes the fields given (a new .p8 key replaces the old); the others are kept. */
  async updateApns(ctx: RequestContext, input: ApnsProviderInput): Promise<ProvidersChanged<ApnsProviderView>> {
    const providerId = checkedProviderId(input.providerId);
    const problems: ErrorDetails = {};
    const checked = checkApnsFields(input, problems);
    if (Object.keys(problems).length > 0) throw badRequest(problems);
    const fields = ['keyId', 'teamId', 'bundleId', 'p8KeyFilename', 'p8Key', 'includeContentAvailable', 'includeMutableContent', 'productionMode'] as const;
    if (fields.every((field) => input[field] === undefined)) throw badRequest({ body: `names nothing to change: give ${fields.join(', ')}` });
    const sealed = checked.p8Key === undefined ? undefined : this.deps.secrets.seal(checked.p8Key, secretContext(ctx.appId, 'apns', providerId, 'p8Key'));
    return this.change(ctx, 'apns', 'update_apns_provider', async (tx) => {
      const current = await this.deps.providers.getApns(ctx.appId, providerId, tx);
      if (!current) throw notFound('apns', providerId);
      await this.deps.providers.updateApns(
        ctx.appId,
        providerId,
        {
          keyId: checked.keyId ?? current.keyId,
          teamId: checked.teamId ?? current.teamId,
          bundleId: input.bundleId ?? current.bundleId,
          p8KeyFilename: input.p8KeyFilename ?? current.p8KeyFilename,
          p8KeySealed: sealed ?? current.p8KeySealed,
          productionMode: input.productionMode ?? current.productionMode,
          includeContentAvailable: input.includeContentAvailable ?? current.includeContentAvailable,
          includeMutableContent: input.includeMutableContent ?? current.includeMutableContent,
        },
        tx,
      );
    });
  }

  // -- Either kind --

  /** Deletes a provider; when it was the default, the oldest remaining one becomes the default. */
  async delete(ctx: RequestContext, kind: 'fcm', providerId: string): Promise<ProvidersChanged<FcmProviderView>>;
  async delete(ctx: RequestContext, kind: 'apns', providerId: string): Promise<ProvidersChanged<ApnsProviderView>>;
  async delete(ctx: RequestContext, kind: PushProviderKind, providerId: string): Promise<ProvidersChanged<FcmProviderView | ApnsProviderView>> {
    return this.change(ctx, kind, `delete_${kind}_provider`, async (tx) => {
      const deleted = await this.deps.providers.delete(ctx.appId, kind, providerId, tx);
      if (!deleted) throw notFound(kind, providerId);
      if (deleted.wasDefault) await this.deps.providers.promoteOldest(ctx.appId, kind, tx);
    });
  }

  /** Makes a provider the default of its kind (the former default no longer is). */
  async setDefault(ctx: RequestContext, kind: 'fcm', providerId: string): Promise<ProvidersChanged<FcmProviderView>>;
  async setDefault(ctx: RequestContext, kind: 'apns', providerId: string): Promise<ProvidersChanged<ApnsProviderView>>;
  async setDefault(ctx: RequestContext, kind: PushProviderKind, providerId: string): Promise<ProvidersChanged<FcmProviderView | ApnsProviderView>> {
    return this.change(ctx, kind, `default_${kind}_provider`, async (tx) => {
      if (!(await this.deps.providers.exists(ctx.appId, kind, providerId, tx))) throw notFound(kind, providerId);
      await this.deps.providers.setDefault(ctx.appId, kind, providerId, tx);
    });
  }

  /**
   * The app's providers with their secrets opened, for the delivery engine (never for an
   * answer): each kind in the order of the lists, the default marked. A provider whose secret
   * does not open is left out and named in `unopened` (and logged), so the others still serve.
   */
  async forDelivery(ctx: RequestContext): Promise<PushProvidersForDelivery> {
    const appId = ctx.appId;
    const [fcmRows, apnsRows] = await Promise.all([this.deps.providers.listFcm(appId), this.deps.providers.listApns(appId)]);
    const out: PushProvidersForDelivery = { fcm: [], apns: [], unopened: [] };
    for (const row of fcmRows) {
      const opened = this.open(ctx, 'fcm', row.providerId, () => {
        const account = JSON.parse(this.deps.secrets.open(row.serviceAccountSealed, secretContext(appId, 'fcm', row.providerId, 'serviceAccount'))) as FcmServiceAccount;
        return { kind: 'fcm' as const, providerId: row.providerId, isDefault: row.isDefault, serviceAccount: account, notificationInPayload: row.notificationInPayload };
      });
      if (opened) out.fcm.push(opened);
      else out.unopened.push({ kind: 'fcm', providerId: row.providerId });
    }
    for (const row of apnsRows) {
      const opened = this.open(ctx, 'apns', row.providerId, () => ({
        kind: 'apns' as const,
        providerId: row.providerId,
        isDefault: row.isDefault,
        keyId: row.keyId,
        teamId: row.teamId,
        bundleId: row.bundleId,
        p8Key: this.deps.secrets.open(row.p8KeySealed, secretContext(appId, 'apns', row.providerId, 'p8Key')),
        productionMode: row.productionMode,
        includeContentAvailable: row.includeContentAvailable,
        includeMutableContent: row.includeMutableContent,
      }));
      if (opened) out.apns.push(opened);
      else out.unopened.push({ kind: 'apns', providerId: row.providerId });
    }
    return out;
  }

  // -- The writes' common part --

  /** Adds a provider in turn with the kind's other writes: at most PUSH_PROVIDER_LIMITS.perApp; the first becomes the default. */
  private async add<K extends PushProviderKind>(
    ctx: RequestContext,
    kind: K,
    providerId: string,
    create: (tx: Tx, isDefault: boolean) => Promise<void>,
  ): Promise<ProvidersChanged<K extends 'fcm' ? FcmProviderView : ApnsProviderView>> {
    try {
      return await this.change(ctx, kind, `add_${kind}_provider`, async (tx) => {
        const { providers } = this.deps;
        if (await providers.exists(ctx.appId, kind, providerId, tx)) throw alreadyExists(kind, providerId);
        if ((await providers.count(ctx.appId, kind, tx)) >= PUSH_PROVIDER_LIMITS.perApp) {
          throw new AppError('ERR_PLAN_QUOTA_RESTRICTION', { params: { limit: PUSH_PROVIDER_LIMITS.perApp, what: `${LABEL[kind]} providers per app` } });
        }
        await create(tx, !(await providers.hasDefault(ctx.appId, kind, tx)));
      });
    } catch (error) {
      if (error instanceof UniqueViolation) throw alreadyExists(kind, providerId);
      throw error;
    }
  }

  /** One write of the app's providers of a kind, in turn with the others (the lock), answered with the kind's providers after it. */
  private async change<K extends PushProviderKind>(
    ctx: RequestContext,
    kind: K,
    name: string,
    work: (tx: Tx) => Promise<void>,
  ): Promise<ProvidersChanged<K extends 'fcm' ? FcmProviderView : ApnsProviderView>> {
    const { providers } = this.deps;
    const pushProviders = await withTransaction(
      this.deps.db,
      name,
      async (tx) => {
        await providers.lock(ctx.appId, kind, tx);
        await work(tx);
        await this.deps.syncDelivery?.(ctx.appId, tx);
        return kind === 'fcm' ? (await providers.listFcm(ctx.appId, tx)).map(fcmView) : (await providers.listApns(ctx.appId, tx)).map(apnsView);
      },
      ctx.log,
    );
    return { success: true, pushProviders: pushProviders as Array<K extends 'fcm' ? FcmProviderView : ApnsProviderView> };
  }

  private sealedAccount(ctx: RequestContext, providerId: string, account: FcmServiceAccount) {
    return {
      projectId: account.project_id,
      clientEmail: account.client_email,
      privateKeyId: account.private_key_id ?? null,
      serviceAccountSealed: this.deps.secrets.seal(JSON.stringify(account), secretContext(ctx.appId, 'fcm', providerId, 'serviceAccount')),
    };
  }

  private open<T>(ctx: RequestContext, kind: PushProviderKind, providerId: string, read: () => T): T | undefined {
    try {
      return read();
    } catch (error) {
      ctx.log.warn({ kind, providerId, err: (error as Error).message }, 'a push provider’s secret does not open: it is left out of delivery');
      return undefined;
    }
  }
}

function serviceAccountOf(raw: unknown, problems: ErrorDetails, allowHttp: boolean): FcmServiceAccount | undefined {
  const checked = checkServiceAccount(raw, 'serviceAccountCreds', allowHttp);
  if ('problems' in checked) {
    Object.assign(problems, checked.problems);
    return undefined;
  }
  return checked.account;
}

function fcmView(row: StoredFcmProvider): FcmProviderView {
  return {
    providerId: row.providerId,
    isDefault: row.isDefault,
    ...(row.serviceAccountFilename !== null ? { serviceAccountFilename: row.serviceAccountFilename } : {}),
    serviceAccountCreds: summarizeServiceAccount({ project_id: row.projectId, client_email: row.clientEmail, ...(row.privateKeyId !== null ? { private_key_id: row.privateKeyId } : {}) }),
    notificationInPayload: row.notificationInPayload,
    createdAt: toUnix(row.createdAt),
    updatedAt: toUnix(row.updatedAt),
  };
}

function apnsView(row: StoredApnsProvider): ApnsProviderView {
  return {
    providerId: row.providerId,
    isDefault: row.isDefault,
    keyId: row.keyId,
    teamId: row.teamId,
    bundleId: row.bundleId,
    ...(row.p8KeyFilename !== null ? { p8KeyFilename: row.p8KeyFilename } : {}),
    includeContentAvailable: row.includeContentAvailable,
    includeMutableContent: row.includeMutableContent,
    productionMode: row.productionMode,
    createdAt: toUnix(row.createdAt),
    updatedAt: toUnix(row.updatedAt),
  };
}

function notFound(kind: PushProviderKind, providerId: string): AppError {
  return new AppError('ERR_PUSH_PROVIDER_NOT_FOUND', { params: { kind: LABEL[kind], providerId } });
}

function alreadyExists(kind: PushProviderKind, providerId: string): AppError {
  return new AppError('ERR_PUSH_PROVIDER_ALREADY_EXISTS', { params: { kind: LABEL[kind], providerId } });
}
