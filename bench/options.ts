// The command line of `npm run bench` (see bench/run.ts), parsed once for every module of the bench.
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    only: { type: 'string' },
    'poll-ms': { type: 'string', default: '5' },
    profile: { type: 'string' },
    repeat: { type: 'string', default: '3' },
  },
});

const only = args.only ? new Set(args.only.split(',').map((s) => s.trim())) : undefined;

export const options = {
  durationSeconds: Number(args.duration),
  connections: Number(args.connections),
  pollMs: Number(args['poll-ms']),
  repeat: Math.max(1, Number(args.repeat)),
  /** A directory for the service's .cpuprofile (`--cpu-prof`), or undefined. */
  profileDir: args.profile,
  /** Whether a row (its number, or `ref`) is part of this run (`--only`). */
  wanted: (row: string) => !only || only.has(row),
};
export type Options = typeof options;
