import fastGeoip from 'fast-geoip';

export interface Geo {
  country: string | null;
  region: string | null;
  city: string | null;
  timezone: string | null;
}

/** Where an IP address is, or null when the database does not know it. */
export type GeoLookup = (ip: string) => Promise<Geo | null>;

/**
 * Offline lookup in the GeoLite data that the `fast-geoip` package ships: no
 * network call per request, and the files are read on demand rather than
 * held in memory. Operators update the data by updating that package
 * (`npm update fast-geoip`). It knows IPv4 only; IPv6 visitors get nulls.
 */
export const offlineGeo: GeoLookup = async (ip) => {
  const v4 = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
  if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(v4)) return null;
  const found = await fastGeoip.lookup(v4);
  if (!found) return null;
  return {
    country: found.country || null,
    region: found.region || null,
    city: found.city || null,
    timezone: found.timezone || null,
  };
};
