/**
 * SendGrid's v3 Mail Send API (www.twilio.com/docs/sendgrid/api-reference/mail-send/mail-send),
 * spoken directly: one POST of JSON with the API key as a bearer token. No @sendgrid/mail: it
 * is a wrapper of this one request (undici posts it, http-client.ts).
 */
import { header, parseJson, ProviderHttp, type ProviderAnswer } from './http-client.js';
import { DEFAULT_PROVIDER_TIMEOUT_MS, isPassingStatus, retryResult, type DeliveryResult, type ProviderTimeoutOptions } from './types.js';

/** A SendGrid provider's settings. */
export interface SendGridCredentials {
  apiKey: string;
  /** The sender: an address SendGrid has verified for the account. */
  fromEmail: string;
  fromName?: string;
  /** A Dynamic Template (d-…) rendering the mail from `templateData` (the vendor's SendGrid integration). */
  templateId?: string;
  /** The unsubscribe group (asm.group_id): SendGrid adds its unsubscribe link and honours it. */
  unsubscribeGroupId?: string;
  /** Reply-To, when the provider allows replies. */
  replyToEmail?: string;
}

export interface SendGridEmail {
  to: string;
  /** The recipient's name, shown beside the address. */
  toName?: string;
  /** Also given to a template as `subject` (the vendor's templates use {{subject}}). */
  subject: string;
  /** The text/plain part: required without a template; with one, sent when given. */
  text?: string;
  /** Sent as a second part (multipart/alternative) when given. */
  html?: string;
  /** A template's data (personalizations[0].dynamic_template_data), with `subject` added. */
  templateData?: Record<string, unknown>;
}

export interface SendGridClientOptions extends ProviderTimeoutOptions {
  /** SendGrid's origin (default https://api.sendgrid.com). */
  baseUrl?: string;
}

export class SendGridClient {
  private readonly http: ProviderHttp;
  private readonly baseUrl: string;

  constructor(options: SendGridClientOptions = {}) {
    this.http = new ProviderHttp(options.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS);
    this.baseUrl = (options.baseUrl ?? 'https://api.sendgrid.com').replace(/\/+$/, '');
  }

  /** Sends one e-mail: one request. */
  async send(credentials: SendGridCredentials, email: SendGridEmail): Promise<DeliveryResult> {
    if (!credentials.templateId && email.text === undefined) return { outcome: 'failed', status: null, error: 'an e-mail without a template needs a text part' };
    const answer = await this.http.post(`${this.baseUrl}/v3/mail/send`, JSON.stringify(mailBody(credentials, email)), {
      authorization: `Bearer ${credentials.apiKey}`,
      'content-type': 'application/json',
    });
    if ('error' in answer) return retryResult(null, answer.error);
    return result(answer);
  }

  close(): void {
    this.http.close();
  }
}

/** The Mail Send body: one personalization to one address; parts text first (SendGrid's rule; RFC 2046: the preferred part last). */
export function mailBody(credentials: SendGridCredentials, email: SendGridEmail): Record<string, unknown> {
  const personalization: Record<string, unknown> = { to: [email.toName ? { email: email.to, name: email.toName } : { email: email.to }] };
  if (credentials.templateId) personalization.dynamic_template_data = Object.assign({}, email.templateData, { subject: email.subject });
  const body: Record<string, unknown> = {
    personalizations: [personalization],
    from: credentials.fromName ? { email: credentials.fromEmail, name: credentials.fromName } : { email: credentials.fromEmail },
    subject: email.subject,
  };
  const content: Array<{ type: string; value: string }> = [];
  if (email.text !== undefined) content.push({ type: 'text/plain', value: email.text });
  if (email.html !== undefined) content.push({ type: 'text/html', value: email.html });
  if (content.length > 0) body.content = content;
  if (credentials.templateId) body.template_id = credentials.templateId;
  if (credentials.replyToEmail) body.reply_to = { email: credentials.replyToEmail };
  if (credentials.unsubscribeGroupId) body.asm = { group_id: Number(credentials.unsubscribeGroupId) };
  return body;
}

interface SendGridErrors {
  errors?: Array<{ message?: string; field?: string | null }>;
}

/** What an answer means: 202 accepted; 400 about the recipient's address is an invalid recipient. */
function result(answer: ProviderAnswer): DeliveryResult {
  if (answer.status === 202 || answer.status === 200) {
    const id = header(answer.headers, 'x-message-id');
    return id ? { outcome: 'delivered', status: answer.status, error: null, providerMessageId: id } : { outcome: 'delivered', status: answer.status, error: null };
  }
  const errors = (parseJson(answer.body) as SendGridErrors | undefined)?.errors;
  const list = Array.isArray(errors) ? errors : [];
  const detail = list.map((e) => `${e?.field ? `${e.field}: ` : ''}${e?.message ?? ''}`).join('; ');
  const error = `SendGrid answered ${answer.status}${detail ? `: ${detail}` : ''}`;
  if (isPassingStatus(answer.status)) return retryResult(answer.status, error, header(answer.headers, 'retry-after'));
  // The recipient's address refused as an address (personalizations.0.to.0.email): the contact detail is wrong.
  if (answer.status === 400 && list.length > 0 && list.every((e) => typeof e?.field === 'string' && /^personalizations\.\d+\.to\.\d+\.email$/.test(e.field))) {
    return { outcome: 'invalid-recipient', status: 400, error };
  }
  return { outcome: 'failed', status: answer.status, error };
}
