// Every console page's progressive enhancement, served as /assets/console.js (bundled at start by
// src/console/pages/scripts.ts; the CSP allows script-src 'self', never inline): every page works
// without it.
import { addCopyButtons } from './copyButtons.ts';
import { followLiveRun } from './liveRun.ts';
import { followNodeLinks } from './nodeTarget.ts';

addCopyButtons();
followNodeLinks();
followLiveRun();
