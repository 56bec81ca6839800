/**
 * Twilio's Programmable Messaging REST API (www.twilio.com/docs/messaging/api/message-resource
 * #create-a-message-resource), spoken directly: one form-encoded POST with the account's SID
 * and auth token as Basic auth. No twilio SDK: it is a wrapper of this request (undici posts
 * it, http-client.ts).
 */
import { header, parseJson, ProviderHttp, type ProviderAnswer } from './http-client.js';
import { DEFAULT_PROVIDER_TIMEOUT_MS, isPassingStatus, retryResult, type DeliveryResult, type ProviderTimeoutOptions } from './types.js';

/** A Twilio provider's settings: the sender is a number (`from`) or a Messaging Service. */
export interface TwilioCredentials {
  accountSid: string;
  authToken: string;
  /** An E.164 number of the account. */
  from?: string;
  /** A Messaging Service (MG…): Twilio picks the sender; takes precedence over `from`. */
  messagingServiceSid?: string;
}

export interface TwilioSms {
  /** E.164. */
  to: string;
  body: string;
}

export interface TwilioClientOptions extends ProviderTimeoutOptions {
  /** Twilio's API origin (default https://api.twilio.com). */
  baseUrl?: string;
}

/**
 * Twilio error codes that say the recipient's number cannot take an SMS (www.twilio.com/docs/
 * api/errors): not a valid number, unreachable, not a mobile number, opted out (STOP).
 */
export const TWILIO_INVALID_RECIPIENT_CODES: ReadonlySet<number> = new Set([
  21211, // Invalid 'To' phone number
  21214, // 'To' phone number cannot be reached
  21217, // Phone number does not appear to be valid
  21401, // Invalid phone number
  21407, // This phone number type does not support SMS
  21421, // PhoneNumber is invalid
  21610, // Attempt to send to an unsubscribed recipient
  21612, // The 'To' phone number is not currently reachable via SMS
  21614, // 'To' number is not a valid mobile number
]);

export class TwilioClient {
  private readonly http: ProviderHttp;
  private readonly baseUrl: string;

  constructor(options: TwilioClientOptions = {}) {
    this.http = new ProviderHttp(options.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS);
    this.baseUrl = (options.baseUrl ?? 'https://api.twilio.com').replace(/\/+$/, '');
  }

  /** Sends one SMS: one request. */
  async send(credentials: TwilioCredentials, sms: TwilioSms): Promise<DeliveryResult> {
    if (!credentials.from && !credentials.messagingServiceSid) return { outcome: 'failed', status: null, error: 'the Twilio provider has neither a From number nor a Messaging Service SID' };
    const url = `${this.baseUrl}/2010-04-01/Accounts/${encodeURIComponent(credentials.accountSid)}/Messages.json`;
    const answer = await this.http.post(url, smsForm(credentials, sms), {
      authorization: `Basic ${Buffer.from(`${credentials.accountSid}:${credentials.authToken}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    });
    if ('error' in answer) return retryResult(null, answer.error);
    return result(answer);
  }

  close(): void {
    this.http.close();
  }
}

/** The form: To, the sender (MessagingServiceSid or From), Body. */
export function smsForm(credentials: TwilioCredentials, sms: TwilioSms): string {
  const form = new URLSearchParams({ To: sms.to });
  if (credentials.messagingServiceSid) form.set('MessagingServiceSid', credentials.messagingServiceSid);
  else form.set('From', credentials.from ?? '');
  form.set('Body', sms.body);
  return form.toString();
}

function result(answer: ProviderAnswer): DeliveryResult {
  const json = parseJson(answer.body) as { sid?: unknown; code?: unknown; message?: unknown } | undefined;
  if (answer.status === 201 || answer.status === 200) {
    return typeof json?.sid === 'string' ? { outcome: 'delivered', status: answer.status, error: null, providerMessageId: json.sid } : { outcome: 'delivered', status: answer.status, error: null };
  }
  const code = typeof json?.code === 'number' ? json.code : undefined;
  const error = `Twilio answered ${answer.status}${code ? ` ${code}` : ''}${typeof json?.message === 'string' ? `: ${json.message}` : ''}`;
  if (isPassingStatus(answer.status)) return retryResult(answer.status, error, header(answer.headers, 'retry-after'));
  if (answer.status === 400 && code !== undefined && TWILIO_INVALID_RECIPIENT_CODES.has(code)) return { outcome: 'invalid-recipient', status: 400, error };
  return { outcome: 'failed', status: answer.status, error };
}
