/** A timestamp as the settings pages show it: `2026-11-23 16:49 UTC`. */
export const formatDate = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';

/** The logged-in user every settings view shows in its header. */
export interface PageUser {
  id: number;
  login: string;
  csrf: string;
}
