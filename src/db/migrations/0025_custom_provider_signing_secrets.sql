-- Notifications (docs/notifications.md): a custom provider's POSTs are signed as webhooks are
-- (X-Parley-Signature), with a secret made when the provider is first saved: sealed here, with
-- the masked form the API shows. A provider saved before this has none until it is next saved.
ALTER TABLE notification_custom_providers
  ADD COLUMN signing_secret_sealed text,
  ADD COLUMN signing_secret_hint text,
  ADD CONSTRAINT notification_custom_providers_signing_secret CHECK ((signing_secret_sealed IS NULL) = (signing_secret_hint IS NULL));
