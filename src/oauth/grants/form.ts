import type { components } from '../../../generated/api.d.ts';

/** The token endpoint's form (openapi.yaml TokenRequest); the contract validator has checked its types. */
export type TokenForm = components['schemas']['TokenRequest'];

/** RFC 6749 A.1-A.2 (VSCHAR): printable ASCII, which every code, token and client id is. */
export const isVisibleAscii = (value: string) => /^[\x20-\x7E]+$/.test(value);
