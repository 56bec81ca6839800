/**
 * A fake Twilio Messages API on loopback, checking the protocol: Basic auth of the account's
 * SID and auth token (and the path's SID the same), a form-encoded body of To (E.164), From or
 * MessagingServiceSid, and Body. Accepted messages are answered 201 with a sid; the numbers a
 * test marks are refused with Twilio's error codes.
 */
import crypto from 'node:crypto';
import type http from 'node:http';
import { answer, listen, readBody, Script, type FakeBase } from './common.js';

export interface SentSms {
  headers: http.IncomingHttpHeaders;
  form: Record<string, string>;
  sid: string;
}

export interface FakeTwilio extends FakeBase {
  baseUrl: string;
  accountSid: string;
  authToken: string;
  messages: SentSms[];
  /** Numbers answered 21614 ('To' number is not a valid mobile number), e.g. landlines. */
  landlines: Set<string>;
  /** Numbers answered 21610 (the recipient replied STOP). */
  unsubscribed: Set<string>;
}

const E164 = /^\+[1-9]\d{6,14}$/;

function twilioError(res: http.ServerResponse, status: number, code: number, message: string): void {
  answer(res, status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });
}

export async function startFakeTwilio(): Promise<FakeTwilio> {
  const accountSid = `AC${crypto.randomBytes(16).toString('hex')}`;
  const authToken = crypto.randomBytes(16).toString('hex');
  const problems: string[] = [];
  const script = new Script();
  const server = await listen(async (req, res) => {
    const raw = await readBody(req);
    if (fake.hangAll) return;
    const sid = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(req.url ?? '')?.[1];
    if (req.method !== 'POST' || !sid) {
      problems.push(`${req.method} ${req.url}`);
      return twilioError(res, 404, 20404, 'The requested resource was not found');
    }
    if (req.headers.authorization !== `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`) return twilioError(res, 401, 20003, 'Authenticate');
    if (sid !== accountSid) {
      problems.push(`the path's account ${sid} is not the authenticated one`);
      return twilioError(res, 401, 20003, 'Authenticate');
    }
    if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) {
      problems.push(`content-type ${req.headers['content-type']}`);
      return twilioError(res, 400, 21602, 'Message body is required.');
    }
    const form = Object.fromEntries(new URLSearchParams(raw));
    const refuse = (code: number, message: string) => {
      problems.push(`${code}: ${message}`);
      twilioError(res, 400, code, message);
    };
    if (!form.To) return refuse(21604, "A 'To' phone number is required.");
    if (!form.From && !form.MessagingServiceSid) return refuse(21603, "A 'From' phone number is required.");
    if (form.From && form.MessagingServiceSid) return refuse(21603, 'Give From or MessagingServiceSid, not both (this fake).');
    if (form.MessagingServiceSid && !/^MG[0-9a-f]{32}$/.test(form.MessagingServiceSid)) return refuse(21701, 'The Messaging Service Sid is invalid.');
    if (form.From && !E164.test(form.From)) return refuse(21212, `The 'From' number ${form.From} is not a valid phone number.`);
    if (!form.Body) return refuse(21602, 'Message body is required.');
    if (form.Body.length > 1600) return refuse(21617, 'The concatenated message body exceeds the 1600 character limit.');
    const extra = Object.keys(form).filter((key) => !['To', 'From', 'MessagingServiceSid', 'Body'].includes(key));
    if (extra.length > 0) return refuse(21000, `unexpected parameters ${extra.join(', ')}`);
    const scripted = script.next();
    if (scripted) return scripted.hang ? undefined : answer(res, scripted.status, scripted.body, scripted.headers);
    // The recipient's number: the protocol's course (not the client's mistake).
    if (!E164.test(form.To)) return twilioError(res, 400, 21211, `The 'To' number ${form.To} is not a valid phone number.`);
    if (fake.landlines.has(form.To)) return twilioError(res, 400, 21614, `'To' number ${form.To} is not a valid mobile number`);
    if (fake.unsubscribed.has(form.To)) return twilioError(res, 400, 21610, 'Attempt to send to unsubscribed recipient');
    const messageSid = `SM${crypto.randomBytes(16).toString('hex')}`;
    fake.messages.push({ headers: req.headers, form, sid: messageSid });
    answer(res, 201, {
      sid: messageSid,
      account_sid: accountSid,
      to: form.To,
      from: form.From ?? null,
      messaging_service_sid: form.MessagingServiceSid ?? null,
      body: form.Body,
      status: 'queued',
      num_segments: '1',
    });
  }, problems);
  const fake: FakeTwilio = {
    baseUrl: server.origin,
    accountSid,
    authToken,
    problems,
    messages: [],
    landlines: new Set(),
    unsubscribed: new Set(),
    hangAll: false,
    script: (...answers) => script.push(answers),
    close: () => server.close(),
  };
  return fake;
}
