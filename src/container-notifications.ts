import type { Database } from './db/database.js';
import type { SecretBox } from './domain/secret-box.js';
import type { UsersService } from './services/users.service.js';

/**
 * Notifications' part of the composition root (docs/notifications.md): the app's settings and
 * providers (push, SMS, e-mail; their secrets sealed by `secrets`), users' preferences, push
 * tokens, mutes, time zones and contact details, and the notification log. container.ts calls it
 * once.
 */
export function createNotifications(
  database: Database,
  deps: {
    /** Seals provider secrets at rest (PARLEY_SECRET_KEY). */
    secrets: SecretBox;
    users: UsersService;
    /** PARLEY_WEBHOOK_ALLOW_PRIVATE: provider URLs may be http and private or loopback hosts. */
    allowPrivate: boolean;
  },
) {
  const db = database.db;
  void db;
  void deps;

  // -- The app's settings and push providers (settings, FCM, APNs) --

  // -- SMS and e-mail providers (Twilio, SendGrid) and custom providers --

  // -- Users' preferences, push tokens, mutes, time zone, contact details; the notification log --

  return {
    services: {
      // -- The app's settings and push providers --
      // -- SMS, e-mail and custom providers --
      // -- Users' notification data and the log --
    },
  };
}
