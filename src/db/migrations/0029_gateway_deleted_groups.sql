-- The members a deleted group had, for the gateway's resumes (docs/realtime.md, "Resume"): a
-- member away when their group was deleted is shown its group_deleted when they resume, though
-- the group and its memberships are gone. One row per member, written by the trigger below in
-- the deleting transaction (`tx`: its group_deleted event's), kept as long as the event log
-- keeps events (the retention deletes older rows). No foreign key: an app's or a user's delete
-- takes its rows by app_id like any other table's, and a row without its event is never read.
CREATE TABLE gateway_deleted_group_members (
  app_id     text NOT NULL,
  uid        text COLLATE "C" NOT NULL,
  guid       text COLLATE "C" NOT NULL,
  tx         xid8 NOT NULL DEFAULT pg_current_xact_id(),
  deleted_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, uid, guid, tx)
);
-- The retention's deletes, oldest first.
CREATE INDEX gateway_deleted_group_members_app_deleted ON gateway_deleted_group_members (app_id, deleted_at);

-- Before the group row goes (its memberships go after it, by their foreign key).
CREATE FUNCTION groups_keep_deleted_members() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO gateway_deleted_group_members (app_id, uid, guid)
  SELECT app_id, uid, guid FROM group_members WHERE app_id = OLD.app_id AND guid = OLD.guid
  ON CONFLICT DO NOTHING;
  RETURN OLD;
END $$;
CREATE TRIGGER groups_keep_deleted_members BEFORE DELETE ON groups
  FOR EACH ROW EXECUTE FUNCTION groups_keep_deleted_members();
