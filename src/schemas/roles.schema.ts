import { Type } from '@sinclair/typebox';
import { LIMITS } from '../domain/normalize.js';
import { FEATURES, ROLE_PERMISSIONS, SCOPE_PERMISSIONS, type PermissionDefinition } from '../domain/permissions.js';
import { Data, DataWithMeta, Id, JsonObject, PageQuery, PaginationMeta, SuccessMessage, UnixTime } from './common.schema.js';
import { ScopeSchema } from './groups.schema.js';

const SettingValue = Type.Union([Type.Literal('all'), Type.Literal('friendsOnly')]);
const RoleSettingsSchema = Type.Object(
  {
    listUsers: Type.Optional(SettingValue),
    sendMessagesTo: Type.Optional(SettingValue),
  },
  { additionalProperties: false, description: 'Restricts listing users and sending messages to all users or friends only (stored; see docs/compatibility.md).' },
);

export const Role = Type.Object(
  {
    role: Type.String(),
    name: Type.String(),
    description: Type.Optional(Type.String()),
    metadata: Type.Optional(JsonObject('Metadata as set.')),
    settings: Type.Optional(RoleSettingsSchema),
    createdAt: UnixTime('Unix seconds.'),
    updatedAt: Type.Optional(UnixTime('Unix seconds.')),
  },
  { description: 'A role, as the vendor returns it.' },
);

const roleFields = {
  name: Type.String({ minLength: 1, maxLength: LIMITS.nameLength, description: 'Friendly name of the role.' }),
  description: Type.String({ maxLength: LIMITS.roleDescriptionLength, description: 'Description of the role.' }),
  metadata: JsonObject('Additional information about the role as JSON.'),
};

export const CreateRoleBody = Type.Object({
  role: Id('A unique identifier for the role; stored lower-cased.'),
  name: roleFields.name,
  description: Type.Optional(roleFields.description),
  metadata: Type.Optional(roleFields.metadata),
  settings: Type.Optional(RoleSettingsSchema),
});

export const UpdateRoleBody = Type.Object({
  name: Type.Optional(roleFields.name),
  description: Type.Optional(roleFields.description),
  metadata: Type.Optional(roleFields.metadata),
  settings: Type.Optional(RoleSettingsSchema),
  unset: Type.Optional(
    Type.Array(Type.Union([Type.Literal('settings'), Type.Literal('description'), Type.Literal('metadata')]), {
      maxItems: 3,
      description: 'Fields to remove: settings, description, metadata.',
    }),
  ),
});

export const ListRolesQuery = Type.Object({ ...PageQuery });

export const RoleParams = Type.Object({ role: Type.String({ minLength: 1, maxLength: 200, description: 'A role id.' }) });

const FeatureKey = Type.String({ minLength: 1, maxLength: 100, description: 'A feature key: u.listUsers or listUsers.' });

export const RestrictFeaturesBody = Type.Object({
  featuresToRestrict: Type.Array(FeatureKey, { minItems: 1, maxItems: 100, description: 'Keys of the features to be restricted.' }),
});

export const AllowFeaturesBody = Type.Object({
  featuresToAllow: Type.Optional(Type.Array(FeatureKey, { maxItems: 100, description: 'Keys of the features to be allowed.' })),
  allowAll: Type.Optional(Type.Boolean({ description: 'Allows every feature of the role.' })),
});

const RestrictedFeature = Type.Object({
  title: Type.String(),
  description: Type.String(),
  key: Type.String({ description: 'u.<feature>' }),
  path: Type.String({ description: 'The client API path the feature guards.' }),
  createdAt: UnixTime('When the feature was restricted.'),
});

const FeatureResult = Type.Object({ success: Type.Boolean(), message: Type.String() });

export const RoleResponse = Data(Role);
export const RoleListResponse = DataWithMeta(Type.Array(Role), PaginationMeta);
export const RoleDeleteResponse = Data(SuccessMessage);
export const RestrictFeaturesResponse = Data(
  Type.Object(Object.fromEntries(FEATURES.map((feature) => [feature.key, Type.Optional(FeatureResult)])), {
    description: 'The result per feature key, e.g. "u.listUsers".',
  }),
);
export const RestrictedFeatureListResponse = DataWithMeta(Type.Array(RestrictedFeature), PaginationMeta);
export const AllowFeaturesResponse = Data(SuccessMessage);

// RBAC and SBAC

const PermissionValueSchema = Type.Union([Type.String(), Type.Array(Type.String())]);

const Permission = Type.Object({
  id: Type.String({ description: 'The permission key, e.g. createGroup or sendMessage.allowedMessageTypes.' }),
  type: Type.Union([Type.Literal('role'), Type.Literal('scope')]),
  title: Type.String(),
  description: Type.String(),
  dataType: Type.Union([Type.Literal('string'), Type.Literal('stringArray'), Type.Literal('rolesStringArray'), Type.Literal('customStringArray')]),
  availableValues: Type.Array(Type.String()),
  defaultValue: PermissionValueSchema,
  value: PermissionValueSchema,
  createdAt: Type.Optional(UnixTime('When the permission was first set.')),
  updatedAt: Type.Optional(UnixTime('When the permission was last changed.')),
});

const PermissionValues = Type.Record(Type.String(), PermissionValueSchema, { description: 'Every permission explicitly set.' });

export const SetPermissionsBody = Type.Object({
  permissions: Type.Object({}, { additionalProperties: true, description: 'Permission key → value (allow/deny, a mode, or an array).' }),
});

export const RolePermissionParams = Type.Object({
  role: RoleParams.properties.role,
  permission: Type.String({ minLength: 1, maxLength: 200, description: 'The permission key to unset.' }),
});

export const ScopeParams = Type.Object({
  guid: Type.String({ minLength: 1, maxLength: 200, description: 'GUID of a group.' }),
  scope: ScopeSchema,
});

export const ScopePermissionParams = Type.Object({
  ...ScopeParams.properties,
  permission: Type.String({ minLength: 1, maxLength: 200, description: 'The permission key to unset.' }),
});

export const PermissionListResponse = DataWithMeta(Type.Array(Permission), PaginationMeta);
/** A result per permission the call sets, under its key, and every permission set afterwards. */
const setResponse = (catalogue: readonly PermissionDefinition[]) =>
  Data(
    Type.Object({
      ...Object.fromEntries(catalogue.map((permission) => [permission.id, Type.Optional(FeatureResult)])),
      permissions: PermissionValues,
    }),
  );
export const SetRolePermissionsResponse = setResponse(ROLE_PERMISSIONS);
export const SetScopePermissionsResponse = setResponse(SCOPE_PERMISSIONS);
export const UnsetPermissionResponse = Data(Type.Object({ permissions: PermissionValues }));
