// The import rules `npm run lint` holds (lint:deps). The folders of src/ form a ladder: a folder
// imports only folders below it, never one above, so no folder-level cycle. Bottom to top:
//   outbound < shared < db < http < html < ops < nodes < workflows < secrets < accounts < open <
//   oauth < runs < hooks < schedules < serverless < mcp < console < cli
// with the root modules config.ts, fairnessConfig.ts and context.ts (what every layer reads; they
// import only outbound/ and shared/) near the bottom, and the assembly over them all: app.ts,
// machinery.ts (runs composed with hooks and schedules), main.ts, worker.ts, lifecycle.ts.
// A domain reaches another through its services, never its store (the SQL behind them).
/** A store module: `store.ts`, `<thing>.store.ts`, and the runs store's dialect adapters. */
const STORE = '/(store|[A-Za-z]+[.]store|runsStore[A-Za-z]*)[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No module imports itself through others.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycle',
      comment: 'The folders of src/ form a ladder: no folder imports one that imports it back.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/[^/]+' },
      to: { circular: true },
    },
    {
      name: 'assembly-on-top',
      comment:
        'The assembly (app.ts, machinery.ts, main.ts, worker.ts, lifecycle.ts) composes the folders; none imports it.',
      severity: 'error',
      from: { path: '^src/[^/]+/' },
      to: { path: '^src/(app|machinery|main|worker|lifecycle)[.]ts$' },
    },
    {
      name: 'no-other-domains-store',
      comment: "A domain reaches another through that domain's services, never its store.",
      severity: 'error',
      from: { path: '^src/([^/]+)/' },
      to: { path: STORE, pathNot: '^src/$1/' },
    },
  ],
  options: {
    // Test files are left out: nothing imports one, so none can sit on a cycle, and a test may
    // seed its data through any store. Type-only imports count like the others.
    exclude: { path: '[.]test[.]ts$' },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
