import { createHash } from 'node:crypto';

const COLOURS = ['#4c6ef5', '#12b886', '#fab005', '#fa5252', '#7950f2', '#15aabf', '#e64980', '#82c91e'];

/**
 * A self-contained default avatar (an SVG data: URI with the initial on a colour derived from the
 * name), so `avatar_url` is always a valid URI without calling a third-party image service.
 */
export function defaultAvatarUrl(name: string): string {
  const digest = createHash('sha256').update(name).digest();
  const colour = COLOURS[digest[0]! % COLOURS.length];
  const initial = (name.match(/[a-zA-Z0-9]/)?.[0] ?? '?').toUpperCase();
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" fill="${colour}"/>` +
    `<text x="32" y="43" font-size="32" text-anchor="middle" fill="#fff" font-family="sans-serif">${initial}</text></svg>`;
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}
