import { ForeignKeyViolation } from '../../db/driver-errors.js';
import type { RequestContext } from '../../domain/context.js';
import { badRequest, type ErrorDetails } from '../../domain/errors.js';
import { normalizeId } from '../../domain/normalize.js';
import { isEmailAddress, isPhoneNumber } from '../../domain/notifications/preferences-contact.js';
import type { UserPreferencesRepository } from '../../repositories/notifications/preferences.repository.js';
import { uidNotFound, type UsersService } from '../users.service.js';

/** Contact details as the API shows them: each field only when stored. */
export interface ContactDetails {
  email?: string;
  phno?: string;
}

/** A change: a value sets the field, null removes it, a field not given stays. */
export interface ContactDetailsChange {
  email?: string | null;
  phno?: string | null;
}

function view(row: { email: string | null; phone: string | null } | undefined): ContactDetails {
  const details: ContactDetails = {};
  if (row?.email) details.email = row.email;
  if (row?.phone) details.phno = row.phone;
  return details;
}

/**
 * A user's contact details for e-mail and SMS notifications (notifications-*-contact-details): an
 * e-mail address and an E.164 phone number. The user is the onBehalfOf user, or `uid`.
 */
export class ContactDetailsService {
  constructor(private readonly deps: { preferences: UserPreferencesRepository; users: Pick<UsersService, 'requireActive'> }) {}

  /** notifications-get-contact-details: `{}` when none are stored. */
  async get(ctx: RequestContext, rawUid: string | undefined): Promise<ContactDetails> {
    const uid = await this.user(ctx, rawUid);
    return view(await this.deps.preferences.get(ctx.appId, uid));
  }

  /** notifications-update-contact-details: answers the details after. */
  async update(ctx: RequestContext, rawUid: string | undefined, change: ContactDetailsChange): Promise<ContactDetails> {
    const problems: ErrorDetails = {};
    if (typeof change.email === 'string' && !isEmailAddress(change.email)) problems.email = 'must be an e-mail address (name@example.com)';
    if (typeof change.phno === 'string' && !isPhoneNumber(change.phno)) problems.phno = 'must be a phone number in E.164: + then the country code and number, 15 digits at most (+14155550123)';
    if (change.email === undefined && change.phno === undefined) problems.email = 'or phno must be given';
    if (Object.keys(problems).length > 0) throw badRequest(problems);
    const uid = await this.user(ctx, rawUid);
    try {
      return view(await this.deps.preferences.setContact(ctx.appId, uid, { email: change.email, phone: change.phno }));
    } catch (error) {
      if (error instanceof ForeignKeyViolation) throw uidNotFound(uid);
      throw error;
    }
  }

  /** notifications-delete-contact-details: both removed (none stored is no matter). */
  async delete(ctx: RequestContext, rawUid: string | undefined): Promise<{ success: true }> {
    const uid = await this.user(ctx, rawUid);
    await this.deps.preferences.deleteContact(ctx.appId, uid);
    return { success: true };
  }

  /** The user: the onBehalfOf header's (the vendor's), or the `uid` query's; both must name the same one. */
  private async user(ctx: RequestContext, rawUid: string | undefined): Promise<string> {
    const fromQuery = rawUid === undefined ? undefined : normalizeId(rawUid);
    if (fromQuery !== undefined && ctx.onBehalfOf !== undefined && ctx.onBehalfOf !== fromQuery) throw badRequest({ uid: 'must name the onBehalfOf user when both are given' });
    const named = fromQuery ?? ctx.onBehalfOf;
    if (named === undefined) throw badRequest({ onBehalfOf: 'is required (or the uid query parameter)' });
    return (await this.deps.users.requireActive(ctx, named)).uid;
  }
}
