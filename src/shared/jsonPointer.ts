/** JSON pointer escaping (RFC 6901 section 3) for a property name. */
export const escapePointer = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');
