import { Type } from '@sinclair/typebox';
import { HOOK_LIMITS } from '../domain/moderation/hook.js';
import { Data, SuccessMessage, UnixTime } from './common.schema.js';

// The moderation hook (docs/compatibility.md, "Parley extensions"). The schema checks types,
// lengths and ranges; the service checks the URL (scheme, host, characters) and names the rule broken.

const OnFailure = Type.Union([Type.Literal('open'), Type.Literal('closed')], {
  description: 'What a failed call (no answer in time, an error, an answer not of the protocol) does: `open` lets the message through, `closed` holds it for review.',
});

export const SetHookBody = Type.Object({
  url: Type.String({
    minLength: 1,
    maxLength: HOOK_LIMITS.urlLength,
    description: 'The endpoint: https to a public host (unless the deployment sets PARLEY_WEBHOOK_ALLOW_PRIVATE=1), with no user name or password, whitespace or control characters.',
  }),
  enabled: Type.Optional(Type.Boolean({ description: 'Whether messages are sent to the hook; true unless given.' })),
  timeoutMs: Type.Optional(
    Type.Integer({
      minimum: HOOK_LIMITS.minTimeoutMs,
      maximum: HOOK_LIMITS.maxTimeoutMs,
      description: `The time the hook has to answer, connection included, in ms; ${HOOK_LIMITS.defaultTimeoutMs} unless given.`,
    }),
  ),
  onFailure: Type.Optional(OnFailure),
  rotateSecret: Type.Optional(Type.Boolean({ description: 'Makes a new signing secret, shown in this answer only (a new hook always gets one).' })),
});

export const Hook = Type.Object(
  {
    url: Type.String(),
    enabled: Type.Boolean(),
    timeoutMs: Type.Integer(),
    onFailure: OnFailure,
    createdAt: UnixTime('Unix seconds.'),
    updatedAt: UnixTime('Unix seconds.'),
    signingSecret: Type.String({
      description: 'Signs each call (X-Parley-Signature, as webhook deliveries): in plain text in the answer that made it, masked (`*`) everywhere else.',
    }),
  },
  { description: "The app's moderation hook." },
);

export const HookResponse = Data(Hook);
export const HookDeleteResponse = Data(SuccessMessage);
