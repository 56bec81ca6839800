import type { GroupType, MemberScope } from '../../db/schema.js';
import { toUnix, toUnixOrUndefined } from '../../domain/time.js';
import type { GroupRow } from '../../repositories/groups.repository.js';

// How a group is shown: the group object of every answer (a pure mapping of the stored row).

export interface Group {
  guid: string;
  name: string;
  type: GroupType;
  icon?: string;
  description?: string;
  metadata?: Record<string, unknown>;
  tags?: string[];
  owner?: string;
  membersCount: number;
  conversationId: string;
  createdAt: number;
  updatedAt?: number;
  /** Relative to the onBehalfOf user. */
  hasJoined?: boolean;
  scope?: MemberScope;
  joinedAt?: number;
}

/** The onBehalfOf user's membership, for hasJoined, scope and joinedAt; undefined without onBehalfOf. */
export type GroupViewer = { scope: MemberScope | null; joinedAt: Date | null } | undefined;

export function toGroup(row: GroupRow, viewer: GroupViewer, options: { withTags: boolean }): Group {
  const group: Group = {
    guid: row.guid,
    name: row.name,
    type: row.type,
    membersCount: row.members_count,
    conversationId: `group_${row.guid}`,
    createdAt: toUnix(row.created_at),
  };
  if (row.icon !== null) group.icon = row.icon;
  if (row.description !== null) group.description = row.description;
  if (row.metadata !== null && row.metadata !== undefined) group.metadata = row.metadata as Record<string, unknown>;
  if (options.withTags && row.tags.length) group.tags = row.tags;
  if (row.owner !== null) group.owner = row.owner;
  const updatedAt = toUnixOrUndefined(row.updated_at);
  if (updatedAt !== undefined) group.updatedAt = updatedAt;
  if (viewer) {
    group.hasJoined = viewer.scope !== null;
    if (viewer.scope !== null) group.scope = viewer.scope;
    if (viewer.joinedAt) group.joinedAt = toUnix(viewer.joinedAt);
  }
  return group;
}
