import { AppError } from '../../domain/errors.js';
import { APP_ID_PATTERN } from '../../domain/normalize.js';

const TENANT_HOST = /^([a-z0-9][a-z0-9-]*)\.api-([a-z0-9-]+)\.(.+)$/;

export interface TenancySettings {
  region: string;
  domain: string;
}

/**
 * The app a request is for: from a Host of the form `<appId>.api-<region>.<domain>` (any port),
 * or, on any other host (localhost, an IP, a proxy's name), from the `appId` header.
 * A host naming another region is refused: one deployment serves one region. A value that
 * cannot be an app id (NUL, a lone surrogate, 100 kB of text) is refused as no such app, before
 * any database lookup, and is not echoed back.
 */
export function resolveAppId(hostname: string, appIdHeader: string | string[] | undefined, settings: TenancySettings): string {
  const match = TENANT_HOST.exec(hostname.toLowerCase());
  if (match && match[3] === settings.domain) {
    const [, appId, region] = match as unknown as [string, string, string];
    if (region !== settings.region) {
      throw new AppError('AUTH_ERR_INVALID_APPID', {
        message: `This deployment serves region ${settings.region}; the request is for region ${region}.`,
      });
    }
    return checked(appId, settings);
  }
  const header = Array.isArray(appIdHeader) ? appIdHeader[0] : appIdHeader;
  if (!header?.trim()) throw new AppError('AUTH_ERR_EMPTY_APPID');
  return checked(header.trim().toLowerCase(), settings);
}

function checked(appId: string, settings: TenancySettings): string {
  if (APP_ID_PATTERN.test(appId)) return appId;
  throw new AppError('AUTH_ERR_INVALID_APPID', {
    message: `The app id must be 1-63 lower-case letters, digits or dashes; no such app exists in this region (${settings.region}).`,
  });
}
