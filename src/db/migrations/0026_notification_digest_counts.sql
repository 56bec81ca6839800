-- Notifications (docs/notifications.md, "E-mail and SMS"): a user's e-mail and SMS digests are
-- capped per day (maxPerDay, maxPerDayPerConversation), counted from the log's entries of the
-- digests sent in the last 24 hours. This index holds only those entries (a small part of the
-- log), by channel, provider and recipient (the group member notified, else the 1:1 receiver),
-- so a count reads one short range whatever the app's push traffic.
CREATE INDEX notification_logs_digests_sent ON notification_logs (app_id, channel, provider, (coalesce(member, receiver)), created_at)
  WHERE channel IN ('email', 'sms') AND notification_triggered AND success;
