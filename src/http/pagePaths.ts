/**
 * Server-rendered pages are not part of the API contract: the validator leaves them alone, and so
 * it does the authorization endpoint, which must answer some invalid requests with a page and
 * others with a redirect, in the order RFC 6749 4.1.2.1 sets (src/oauth/authorize.ts). Errors on
 * these paths are rendered as pages.
 */
export const pagePaths = /^\/(login|logout|settings|assets|oauth\/authorize)(\/|$)/;
