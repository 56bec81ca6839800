/**
 * The error catalogue: every error code Parley answers with, its HTTP status and its default
 * message. Codes are the vendor's (its error guide; docs/compatibility.md, "Transport errors"); the two `ERR_PAYLOAD_TOO_LARGE` and
 * `ERR_UNSUPPORTED_MEDIA_TYPE` are Parley's own, for transport failures the vendor leaves
 * undocumented. No HTTP status is chosen anywhere else.
 *
 * Messages may hold `{name}` placeholders, filled from the params of an AppError.
 */
export const ERROR_CATALOGUE = {
  // Tenancy and authentication
  AUTH_ERR_EMPTY_APPID: {
    status: 401,
    message: 'The request names no app: send it to <appId>.api-<region>.<domain> or set the appId header.',
  },
  AUTH_ERR_INVALID_APPID: { status: 401, message: 'The app {appId} does not exist in this region ({region}).' },
  AUTH_ERR_EMPTY_APIKEY: { status: 401, message: 'The apiKey header is missing.' },
  AUTH_ERR_APIKEY_NOT_FOUND: { status: 401, message: 'The apiKey provided is not valid for this app.' },
  // A user acting for themselves (docs/realtime.md): the authToken header, or a socket's auth frame.
  AUTH_ERR_EMPTY_AUTH_TOKEN: { status: 401, message: 'The authToken is missing.' },
  AUTH_ERR_AUTH_TOKEN_NOT_FOUND: { status: 401, message: 'The authToken provided is not valid for this app.' },
  AUTH_ERR_NO_ACCESS: {
    status: 403,
    message: 'The apiKey provided does not have access to this operation. Use a fullAccess key.',
  },

  // API keys
  ERR_APIKEY_NOT_FOUND: { status: 404, message: 'The apiKey {apiKey} does not exist.' },
  ERR_APIKEY_NO_SELF_ACTION: { status: 403, message: 'An apiKey cannot update or delete itself.' },
  ERR_PLAN_QUOTA_RESTRICTION: { status: 403, message: 'The limit of {limit} {what} has been reached.' },

  // Auth tokens
  ERR_AUTH_TOKEN_NOT_FOUND: { status: 404, message: 'The auth token {authToken} does not exist for the UID {uid}.' },

  // Users
  ERR_UID_NOT_FOUND: { status: 404, message: 'The UID {uid} does not exist.' },
  ERR_UID_ALREADY_EXISTS: { status: 400, message: 'The UID {uid} already exists.' },

  // Friends and blocked users
  ERR_ALREADY_FRIEND: { status: 400, message: 'The user {uid} is already a friend of {friend}.' },
  ERR_CANNOT_FORM_SELF_RELATION: { status: 403, message: 'The user {uid} cannot be their own friend.' },
  ERR_CANNOT_BLOCK_SELF: { status: 403, message: 'The user {uid} cannot block or unblock themselves.' },

  // Roles and permissions
  ERR_ROLE_NOT_FOUND: { status: 404, message: 'The role {role} does not exist.' },
  ERR_ROLE_ALREADY_EXISTS: { status: 400, message: 'The role {role} already exists.' },
  ERR_ROLE_DELETE_DENIED: { status: 403, message: 'The default role cannot be deleted.' },
  // 400, not a server failure's 5xx (which the code's name could suggest): the client can fix it (reassign the users).
  ERR_ROLE_DELETE_FAILED: { status: 400, message: 'The role {role} is held by {count} user(s); give them another role first.' },
  ERR_PERMISSION_DENIED: { status: 403, message: 'The permission {permission} of the role {role} does not allow this.' },

  // Groups, members and bans
  ERR_GUID_NOT_FOUND: { status: 404, message: 'The GUID {guid} does not exist.' },
  ERR_GUID_ALREADY_EXISTS: { status: 400, message: 'The GUID {guid} already exists.' },
  ERR_EMPTY_GROUP_PASS: { status: 400, message: 'A password is required for a password-protected group.' },
  ERR_WRONG_GROUP_PASS: { status: 400, message: 'The password for the group {guid} is wrong.' },
  ERR_GROUP_JOIN_NOT_ALLOWED: { status: 403, message: 'The group {guid} is private: members must be added to it.' },
  ERR_ALREADY_JOINED: { status: 400, message: 'The user {uid} is already a member of the group {guid}.' },
  ERR_NOT_A_MEMBER: { status: 400, message: 'The user {uid} is not a member of the group {guid}.' },
  ERR_GROUP_NOT_JOINED: { status: 403, message: 'The user {uid} has not joined the group {guid}.' },
  ERR_SAME_SCOPE: { status: 400, message: 'The user {uid} already has the scope {scope} in the group {guid}.' },
  ERR_BANNED_GROUPMEMBER: { status: 403, message: 'The user {uid} is banned from the group {guid}.' },
  ERR_ALREADY_BANNED: { status: 400, message: 'The user {uid} is already banned from the group {guid}.' },
  ERR_NOT_A_BANNED_USER: { status: 400, message: 'The user {uid} is not banned from the group {guid}.' },
  ERR_GROUP_NO_CLEARANCE: { status: 403, message: 'The user {uid} is not allowed to do this to {target} in the group {guid}.' },
  ERR_GROUP_NO_ADMIN_SCOPE: { status: 403, message: 'Only admins of the group {guid} may do this.' },
  ERR_GROUP_NO_SCOPE_CLEARANCE: { status: 403, message: 'The user {uid} is not allowed to give or change the scope {scope} in the group {guid}.' },
  ERR_GROUP_NO_SELF_ACTION: { status: 403, message: 'The user {uid} cannot do this to themselves.' },

  // Messages (the vendor's codes; statuses as docs/compatibility.md, "Transport errors", lists them)
  ERR_EMPTY_RECEIVER: { status: 400, message: 'The message names no receiver.' },
  ERR_INVALID_RECEIVER_TYPE: { status: 400, message: 'The receiverType {receiverType} is not valid: use user or group.' },
  ERR_INVALID_MESSAGE_CATEGORY: { status: 400, message: 'The category {category} is not valid: use message or custom.' },
  ERR_EMPTY_MESSAGE_TYPE: { status: 400, message: 'A custom message needs a type.' },
  ERR_INVALID_MESSAGE_TYPE: { status: 400, message: 'The type {type} is not valid for the category {category}.' },
  ERR_EMPTY_MESSAGE_TEXT: { status: 400, message: 'A text message needs data.text.' },
  ERR_EMPTY_MESSAGE_FILE: { status: 400, message: 'A {type} message needs data.attachments with a url.' },
  ERR_EMPTY_CUSTOM_DATA: { status: 400, message: 'A custom message needs data.customData.' },
  ERR_MESSAGE_ID_NOT_FOUND: { status: 404, message: 'The message {id} does not exist.' },
  ERR_MESSAGE_NOT_A_SENDER: { status: 403, message: 'The user {uid} is not the sender of the message {id}: only the sender may {action} it.' },
  ERR_MESSAGE_ACTION_NOT_ALLOWED: { status: 403, message: 'The message {id} cannot be {action}: {reason}.' },
  ERR_BLOCKED_RECEIVER: { status: 403, message: 'The user {uid} has blocked {receiver}: unblock them to send messages.' },
  ERR_BLOCKED_SENDER: { status: 403, message: 'The user {uid} cannot message {receiver}, who has blocked them.' },
  ERR_CONVERSATION_NOT_ACCESSIBLE: { status: 403, message: 'The user {uid} has no conversation {conversationId}: not part of it, or no message yet.' },
  ERR_MESSAGE_THREAD_NESTING: { status: 400, message: 'The message {id} is a thread reply: replies cannot have replies.' },
  ERR_WRONG_MESSAGE_THREAD: { status: 400, message: 'The receiver does not match the conversation of the message {id}.' },
  ERR_WRONG_MESSAGE_THREAD_CATEGORY: { status: 400, message: 'The message {id} is of category {category}, which cannot have a thread.' },

  // Moderation (docs/moderation.md). ERR_BLOCKED_BY_EXTENSION and ERR_BLOCKED_BY_WEBHOOK are the
  // vendor's (its error guide); the not-found and already-exists codes follow its naming.
  ERR_BLOCKED_BY_EXTENSION: { status: 403, message: 'The message was refused by the moderation rule {rule} ({name}).' },
  ERR_BLOCKED_BY_WEBHOOK: { status: 403, message: 'The message was refused by the moderation hook: {reason}.' },
  ERR_RULE_NOT_FOUND: { status: 404, message: 'The moderation rule {id} does not exist.' },
  ERR_RULE_ALREADY_EXISTS: { status: 400, message: 'The moderation rule {id} already exists.' },
  ERR_KEYWORD_NOT_FOUND: { status: 404, message: 'The keyword list {id} does not exist.' },
  ERR_KEYWORD_ALREADY_EXISTS: { status: 400, message: 'The keyword list {id} already exists.' },
  ERR_KEYWORD_IN_USE: { status: 400, message: 'The keyword list {id} is used by the rules {rules}: change them first.' },
  ERR_REASON_NOT_FOUND: { status: 404, message: 'The reason {id} does not exist.' },
  ERR_REASON_ALREADY_EXISTS: { status: 400, message: 'The reason {id} already exists.' },
  ERR_BLOCKED_MESSAGE_NOT_FOUND: { status: 404, message: 'The message {id} is not held by moderation.' },
  ERR_FLAGGED_MESSAGE_NOT_FOUND: { status: 404, message: 'The message {id} has not been flagged.' },
  ERR_MODERATION_HOOK_NOT_FOUND: { status: 404, message: 'The app has no moderation hook.' },
  ERR_MESSAGE_HELD: { status: 403, message: 'The message {id} is held for moderation review: it cannot be {action} until it is approved.' },

  // Notifications (docs/notifications.md): a provider the app has not saved (Twilio, SendGrid, a custom provider).
  ERR_NOTIFICATION_PROVIDER_NOT_FOUND: { status: 404, message: 'The app has no {provider}: save one first (POST).' },
  // FCM and APNs providers: several per app, each named by its providerId.
  ERR_PUSH_PROVIDER_NOT_FOUND: { status: 404, message: 'The {kind} provider {providerId} does not exist.' },
  ERR_PUSH_PROVIDER_ALREADY_EXISTS: { status: 400, message: 'The {kind} provider {providerId} already exists.' },

  // Data import (docs/compatibility.md, "Data import"): a body whose wrapper or record keys are malformed, and a joinedAt out of range.
  ERR_IMPORT_INVALID_USER_FORMAT: { status: 400, message: 'The body must be {"users": {"<uid>": {...}}}, each key equal to its record\'s uid: {problem}.' },
  ERR_IMPORT_INVALID_GROUP_FORMAT: { status: 400, message: 'The body must be {"groups": {"<guid>": {...}}}, each key equal to its record\'s guid: {problem}.' },
  ERR_IMPORT_INVALID_MEMBER_FORMAT: {
    status: 400,
    message: 'The body must be {"members": {"<guid>_member_<uid>": {...}}}, each key equal to its record\'s memberId: {problem}.',
  },
  ERR_IMPORT_INVALID_MESSAGE_FORMAT: {
    status: 400,
    message: 'The body must be {"messages": {"<muid>": {...}}}, each key equal to its record\'s muid: {problem}.',
  },
  ERR_IMPORT_MUID_ALREADY_EXISTS: { status: 400, message: 'A message with the muid {muid} from {sender} has been imported already.' },
  ERR_IMPORT_INVALID_JOINEDAT: { status: 400, message: "The joinedAt {joinedAt} must not be before the group's createdAt ({createdAt}) nor in the future." },

  // The management API (the vendor's codes for it; docs/management-api.md). A wrong key or
  // secret answers AUTH_ERR_APIKEY_NOT_FOUND with a message of its own.
  AUTH_ERR_EMPTY_AUTH_HEADER: {
    status: 401,
    message: 'The key and secret headers are required: a management credential of this deployment (parley admin keys create).',
  },
  ERR_APP_NOT_FOUND: { status: 404, message: 'The app {appId} does not exist.' },
  ERR_WEBHOOK_NOT_FOUND: { status: 404, message: 'The webhook {id} does not exist in the app {appId}.' },
  ERR_DELIVERY_NOT_FOUND: { status: 404, message: 'The delivery {id} does not exist for the webhook {webhookId}.' },
  ERR_TRIGGER_NOT_FOUND: { status: 404, message: 'No such trigger: {triggers}. The triggers are {known}.' },

  // General
  ERR_BAD_REQUEST: { status: 400, message: 'The request is not valid.' },
  ERR_API_NOT_FOUND: { status: 404, message: 'The API {method} {url} does not exist.' },
  ERR_PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is larger than {limit} bytes.' },
  ERR_UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    message: 'The content type {contentType} is not supported. Send application/json.',
  },
  ERR_TOO_MANY_REQUESTS: { status: 429, message: 'Too many requests. You have exceeded the rate limit: retry after {seconds} seconds (Retry-After).' },
  ERR_EXCEPTION: { status: 500, message: 'Something went wrong on the server. The error has been logged.' },
  ERR_MISSION_FAILED: { status: 503, message: 'The server cannot complete the request right now. Retry later.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;
