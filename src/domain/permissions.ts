import { ID_MAX_LENGTH } from './normalize.js';

/**
 * The vendor's permission catalogues: RBAC (per role, app-wide), SBAC (per group and member
 * scope) and the older restricted features. The names, value types and defaults are the
 * vendor's: the 28 role and 11 scope permissions are exactly those of the spec's set/unset
 * examples (its list examples count 28 and 11); the features are the table of its
 * "Restrict Features" docs page.
 */

export type PermissionDataType = 'string' | 'stringArray' | 'rolesStringArray' | 'customStringArray';
export type PermissionValue = string | string[];

export interface PermissionDefinition {
  id: string;
  title: string;
  description: string;
  dataType: PermissionDataType;
  /** For string and stringArray: the values allowed. Empty for the free-form arrays. */
  availableValues: string[];
  defaultValue: PermissionValue;
}

const ALLOW_DENY = ['allow', 'deny'];
const MODES = ['all', 'friends'];
const MESSAGE_TYPES = ['text', 'image', 'audio', 'video', 'file'];
const MESSAGE_CATEGORIES = ['message', 'custom'];
const GROUP_TYPES = ['public', 'password', 'private'];
const RECEIVER_TYPES = ['user', 'group'];
const SCOPES = ['admin', 'moderator', 'participant'];
const CALL_TYPES = ['audio', 'video'];

const toggle = (id: string, what: string): PermissionDefinition => ({
  id,
  title: `Allows/Denies ${what}`,
  description: `Allows/Denies ${what}`,
  dataType: 'string',
  availableValues: ALLOW_DENY,
  defaultValue: 'allow',
});
const mode = (id: string, what: string): PermissionDefinition => ({
  id,
  title: `${what}: all users, or friends only`,
  description: `${what}: all users, or friends only`,
  dataType: 'string',
  availableValues: MODES,
  defaultValue: 'all',
});
const list = (id: string, title: string, dataType: PermissionDataType, availableValues: string[] = []): PermissionDefinition => ({
  id,
  title,
  description: `${title}; empty means no restriction`,
  dataType,
  availableValues,
  defaultValue: [],
});

export const ROLE_PERMISSIONS: readonly PermissionDefinition[] = [
  toggle('listUsers', 'listing users'),
  mode('listUsers.mode', 'Users listed'),
  list('listUsers.allowedRoles', 'Allows listing users of the specified roles', 'rolesStringArray'),
  mode('getUserDetails.mode', 'Users whose details may be fetched'),
  list('getUserDetails.allowedRoles', 'Allows fetching details of users of the specified roles', 'rolesStringArray'),
  toggle('sendMessage', 'sending messages'),
  mode('sendMessage.mode', 'Users messages may be sent to'),
  list('sendMessage.allowedReceiverTypes', 'Allows sending messages to the specified receiver types', 'stringArray', RECEIVER_TYPES),
  list('sendMessage.allowedReceiverRoles', 'Allows sending messages to users of the specified roles', 'rolesStringArray'),
  list('sendMessage.allowedMessageTypes', 'Allows sending messages of the specified types', 'stringArray', MESSAGE_TYPES),
  list('sendMessage.allowedMessageCategories', 'Allows sending messages of the specified categories', 'stringArray', MESSAGE_CATEGORIES),
  list('sendMessage.allowedCustomTypes', 'Allows sending custom messages of the specified types', 'customStringArray'),
  list('sendMessage.allowedMimeTypes', 'Allows sending media of the specified MIME types', 'customStringArray'),
  toggle('editMessage', 'editing messages'),
  list('editMessage.denyForScopes', 'Denies editing others’ messages to the specified group scopes', 'stringArray', SCOPES),
  toggle('deleteMessage', 'deleting messages'),
  list('deleteMessage.denyForScopes', 'Denies deleting others’ messages to the specified group scopes', 'stringArray', SCOPES),
  toggle('initiateCall', 'initiating calls'),
  mode('initiateCall.mode', 'Users calls may be initiated with'),
  list('initiateCall.allowedReceiverRoles', 'Allows calling users of the specified roles', 'rolesStringArray'),
  toggle('createGroup', 'creating groups'),
  list('createGroup.allowedGroupTypes', 'Allows creating groups of the specified types', 'stringArray', GROUP_TYPES),
  toggle('listGroups', 'listing groups'),
  list('listGroups.allowedGroupTypes', 'Allows listing groups of the specified types', 'stringArray', GROUP_TYPES),
  toggle('joinGroup', 'joining groups'),
  list('joinGroup.allowedGroupTypes', 'Allows joining groups of the specified types', 'stringArray', GROUP_TYPES),
  list('listMessages.allowedMessageCategories', 'Allows listing messages of the specified categories', 'stringArray', MESSAGE_CATEGORIES),
  list('listMessages.allowedMessageTypes', 'Allows listing messages of the specified types', 'stringArray', MESSAGE_TYPES),
];

export const SCOPE_PERMISSIONS: readonly PermissionDefinition[] = [
  toggle('sendMessage', 'sending messages in the group'),
  toggle('sendThreadedMessage', 'replying in message threads in the group'),
  toggle('editMessage', 'editing messages in the group'),
  toggle('listMembers', 'listing the members of the group'),
  list('listMembers.allowedScopes', 'Allows listing the members with the specified scopes', 'stringArray', SCOPES),
  toggle('addReaction', 'adding reactions in the group'),
  toggle('listReactions', 'listing reactions in the group'),
  list('listReactions.allowedScopes', 'Allows listing the reactions of members with the specified scopes', 'stringArray', SCOPES),
  toggle('initiateCall', 'initiating calls in the group'),
  list('initiateCall.allowedScopes', 'Allows calling members with the specified scopes', 'stringArray', SCOPES),
  list('initiateCall.allowedType', 'Allows initiating calls of the specified types', 'stringArray', CALL_TYPES),
];

export const ROLE_PERMISSION_BY_ID = new Map(ROLE_PERMISSIONS.map((p) => [p.id, p]));
export const SCOPE_PERMISSION_BY_ID = new Map(SCOPE_PERMISSIONS.map((p) => [p.id, p]));

/** Array values: at most this many items, each at most this long. */
const MAX_ITEMS = 100;
const MAX_ITEM_LENGTH = 255;
const ROLE_ID = /^[a-zA-Z0-9_-]+$/;

/**
 * Checks a value against its definition and returns it normalised (role ids lower-cased, array
 * items de-duplicated), or a problem for ERR_BAD_REQUEST's details. Array permissions also take
 * a single string, as the vendor's scope examples show ("listMembers.allowedScopes": "participant"),
 * and keep that form.
 */
export function checkPermissionValue(definition: PermissionDefinition, value: unknown): { value: PermissionValue } | { problem: string } {
  if (definition.dataType === 'string') {
    if (typeof value === 'string' && definition.availableValues.includes(value)) return { value };
    return { problem: `must be one of ${definition.availableValues.join(', ')}` };
  }
  const items = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(items) || items.length > MAX_ITEMS || !items.every((item) => typeof item === 'string')) {
    return { problem: `must be an array of at most ${MAX_ITEMS} strings` };
  }
  let normalised = items as string[];
  if (definition.dataType === 'stringArray') {
    const wrong = normalised.find((item) => !definition.availableValues.includes(item));
    if (wrong !== undefined) return { problem: `may only hold ${definition.availableValues.join(', ')}` };
  } else if (definition.dataType === 'rolesStringArray') {
    if (!normalised.every((item) => item.length <= ID_MAX_LENGTH && ROLE_ID.test(item))) return { problem: 'must hold role ids' };
    normalised = normalised.map((item) => item.toLowerCase());
  } else if (!normalised.every((item) => item.length > 0 && item.length <= MAX_ITEM_LENGTH)) {
    return { problem: `must hold strings of 1-${MAX_ITEM_LENGTH} characters` };
  }
  normalised = [...new Set(normalised)];
  return { value: typeof value === 'string' ? normalised[0]! : normalised };
}

/** A stored array permission as a list (a single string counts as a one-item list). */
export function asList(value: PermissionValue | undefined): string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : value;
}

export interface FeatureDefinition {
  /** As the vendor's responses spell it: `u.<name>`. */
  key: string;
  title: string;
  description: string;
  path: string;
}

const feature = (name: string, title: string, description: string, path: string): FeatureDefinition => ({
  key: `u.${name}`,
  title,
  description: `Allows logged-in user to ${description}.`,
  path,
});

/** The restrictable features (the vendor's table), with the client API path each guards. */
export const FEATURES: readonly FeatureDefinition[] = [
  feature('addMember', 'Add Member', 'add a member to a group', '/v3/groups/{{guid}}/members'),
  feature('ban', 'Ban User', 'ban a member in a group', '/v3/groups/{{guid}}/bannedusers/{{uid}}'),
  feature('blockUser', 'Block User', 'block a user', '/v3/users/{{uid}}/blockedusers'),
  feature('changeScope', 'Change Scope', 'change the scope of a member in a group', '/v3/groups/{{guid}}/members/{{uid}}'),
  feature('createCall', 'Initiate Call', 'initiate a call', '/v3/calls'),
  feature('createGroup', 'Create Group', 'create a group', '/v3/groups'),
  feature('createMessage', 'Send Message', 'send a message', '/v3/messages'),
  feature('createMessageThread', 'Reply to a Message', 'reply to a message', '/v3/messages/{{id}}/thread'),
  feature('deleteCall', 'Delete Call', 'delete a call', '/v3/calls/{{sessionId}}'),
  feature('deleteConversationForUser', 'Delete Conversation', 'delete a conversation for himself', '/v3/conversations/{{conversationId}}'),
  feature('deleteGroup', 'Delete Group', 'delete a group', '/v3/groups/{{guid}}'),
  feature('deleteGroupMessages', 'Delete Group Messages', 'delete messages in a group', '/v3/groups/{{guid}}/messages'),
  feature('deleteMessage', 'Delete Message', 'delete a message', '/v3/messages/{{id}}'),
  feature('getBlockedUsers', 'Fetch Blocked Users', 'fetch the list of blocked users', '/v3/users/{{uid}}/blockedusers'),
  feature('getCall', 'Get Call', 'fetch the details of a call', '/v3/calls/{{sessionId}}'),
  feature('getConversation', 'Get Conversation', 'get the details of a conversation', '/v3/conversations/{{conversationId}}'),
  feature('getGroup', 'Get Group', 'get the details of a group', '/v3/groups/{{guid}}'),
  feature('getGroupMessages', 'List Group Messages', 'fetch messages in a group', '/v3/groups/{{guid}}/messages'),
  feature('getMember', 'Get Member', 'get details of a member in a group', '/v3/groups/{{guid}}/members/{{uid}}'),
  feature('getMessage', 'Get Message', 'get the details of a message', '/v3/messages/{{id}}'),
  feature('getMyDetails', 'Get My Details', 'fetch his own details', '/v3/me'),
  feature('getUser', 'Get User', 'fetch the details of any other user', '/v3/users/{{uid}}'),
  feature('getUserMessages', 'List User Messages', 'fetch messages sent/received from another user', '/v3/users/{{uid}}/messages'),
  feature('joinGroup', 'Join Group', 'join a group', '/v3/groups/{{guid}}/members'),
  feature('kickMember', 'Kick Member', 'kick a member from the group', '/v3/groups/{{guid}}/members/{{uid}}'),
  feature('leaveGroup', 'Leave Group', 'leave a group', '/v3/groups/{{guid}}/members'),
  feature('listBannedUsers', 'List Banned Users', 'fetch the banned members in a group', '/v3/groups/{{guid}}/bannedusers'),
  feature('listCalls', 'List Calls', 'fetch the call list', '/v3/calls'),
  feature('listConversations', 'List Conversations', 'fetch the conversation list', '/v3/conversations'),
  feature('listGroupMembers', 'List Group Members', 'fetch the members list for a group', '/v3/groups/{{guid}}/members'),
  feature('listGroups', 'List Groups', 'fetch the group list', '/v3/groups'),
  feature('listMessages', 'List Messages', 'fetch all the messages sent by/for him', '/v3/messages'),
  feature('listSettings', 'List Settings', 'fetch the settings', '/v3/settings'),
  feature('listThreadedMessages', 'List Threaded Messages', 'fetch all the replies for a message', '/v3/messages/{{id}}/thread'),
  feature('listUsers', 'List Users', 'fetch the user list', '/v3/users'),
  feature('logout', 'Logout', 'logout', '/v3/me'),
  feature('massMemberOperate', 'Group Mass Operation', 'manage multiple group members with a single API call', '/v3/groups/{{guid}}/members'),
  feature('patchOwner', 'Patch Owner', 'transfer the ownership of a group', '/v3/groups/{{guid}}/owner'),
  feature('unban', 'Unban User', 'unban a member', '/v3/groups/{{guid}}/bannedusers/{{uid}}'),
  feature('unblockUser', 'Unblock User', 'unblock a user', '/v3/users/{{uid}}/blockedusers'),
  feature('updateAuthToken', 'Updates AuthToken', 'update his own details and authtoken details', '/v3/me'),
  feature('updateCall', 'Update Call', 'change the status of initiated/ongoing call', '/v3/calls/{{sessionId}}'),
  feature('updateGroup', 'Edit Group', 'edit group details', '/v3/groups/{{guid}}'),
  feature('updateMessage', 'Edit Message', 'edit a message', '/v3/messages/{{id}}'),
];

export const FEATURE_BY_KEY = new Map(FEATURES.map((f) => [f.key, f]));

/** A feature key as sent: `u.listUsers` or `listUsers`. Undefined when there is no such feature. */
export function featureKey(raw: string): string | undefined {
  const key = raw.startsWith('u.') ? raw : `u.${raw}`;
  return FEATURE_BY_KEY.has(key) ? key : undefined;
}
