// Summarizes a .cpuprofile written by `npm run bench -- --profile DIR`: self time by package (or
// our own source file) and the hottest functions, so a profile can be read without DevTools.
//
//   sh scripts/node.sh bench/profile.ts DIR/CPU....cpuprofile [top=25] [window=SECONDS|FROM-TO]
//
// `window`: only the busiest SECONDS of the profile (the load itself, without the service's start-up,
// the provisioning through the OAuth flow, or the idle time while the peer is measured), or the
// seconds FROM to TO after the profile began (with several loads in one profile: the busy share of
// each second is printed first, to find them).
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const file = process.argv[2];
if (!file) {
  console.error('usage: bench/profile.ts FILE.cpuprofile [top]');
  process.exit(2);
}
const top = Number(process.argv[3] ?? 25);
const windowArg = process.argv[4];
const range = windowArg?.includes('-') ? windowArg.split('-').map((x) => Number(x) * 1e6) : undefined;
const windowUs = windowArg && !range ? Number(windowArg) * 1e6 : undefined;
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const isIdle = (id: number) => byId.get(id)?.callFrame.functionName === '(idle)';

/** The indexes of the samples in the busiest `windowUs` of the profile (all of them without a window). */
const at: number[] = [];
let clock = 0;
for (const d of profile.timeDeltas) at.push((clock += d));

function busiestWindow(): [number, number] {
  if (range) {
    const from = at.findIndex((t) => t >= range[0]!);
    const to = at.findIndex((t) => t > range[1]!);
    return [Math.max(0, from), to < 0 ? at.length : to];
  }
  if (windowUs === undefined) return [0, profile.samples.length];
  let best: [number, number] = [0, 0];
  let bestBusy = -1;
  let busy = 0;
  let start = 0;
  for (let end = 0; end < at.length; end += 1) {
    if (!isIdle(profile.samples[end]!)) busy += profile.timeDeltas[end] ?? 0;
    while (at[end]! - at[start]! > windowUs) {
      if (!isIdle(profile.samples[start]!)) busy -= profile.timeDeltas[start] ?? 0;
      start += 1;
    }
    if (busy > bestBusy) [bestBusy, best] = [busy, [start, end + 1]];
  }
  return best;
}
const [first, last] = busiestWindow();
if (windowArg) {
  const perSecond: number[] = [];
  profile.samples.forEach((id, i) => {
    const second = Math.floor(at[i]! / 1e6);
    perSecond[second] ??= 0;
    if (!isIdle(id)) perSecond[second] += profile.timeDeltas[i] ?? 0;
  });
  console.log(`busy share per second: ${perSecond.map((us, s) => `${s}:${Math.round((us ?? 0) / 1e4)}%`).join(' ')}`);
  console.log(`window: ${(at[first]! / 1e6).toFixed(1)}-${(at[last - 1]! / 1e6).toFixed(1)} s`);
}
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Idle time (waiting for the database, or no load at all) is left out: percentages are of busy time.
const selfTime = new Map<number, number>();
let idle = 0;
for (let i = first; i < last; i += 1) {
  const id = profile.samples[i]!;
  const t = profile.timeDeltas[i] ?? 0;
  if (isIdle(id)) idle += t;
  else selfTime.set(id, (selfTime.get(id) ?? 0) + t);
}
const total = [...selfTime.values()].reduce((a, b) => a + b, 0);

function where(url: string): string {
  if (!url) return '(native/VM)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url;
  const src = url.indexOf('/src/');
  return src >= 0 ? url.slice(src + 1) : url;
}

const byPlace = new Map<string, number>();
const byFunction = new Map<string, number>();
/** Time under a frame of each place (inclusive, counted once per sample). */
const inclusive = new Map<string, number>();
/** Time under each function of our own source (inclusive, counted once per sample): where a request's time goes. */
const ownInclusive = new Map<string, number>();
for (const [id, t] of selfTime) {
  const node = byId.get(id)!;
  const place = where(node.callFrame.url);
  byPlace.set(place, (byPlace.get(place) ?? 0) + t);
  const fn = `${node.callFrame.functionName || '(anonymous)'} ${place}:${node.callFrame.lineNumber + 1}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + t);
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const frame = byId.get(cur)!.callFrame;
    const p = where(frame.url);
    if (!seen.has(p)) {
      seen.add(p);
      inclusive.set(p, (inclusive.get(p) ?? 0) + t);
    }
    const f = `${frame.functionName || '(anonymous)'} ${p}:${frame.lineNumber + 1}`;
    if (p.startsWith('src/') && !seen.has(f)) {
      seen.add(f);
      ownInclusive.set(f, (ownInclusive.get(f) ?? 0) + t);
    }
  }
}

const pct = (t: number) => `${((100 * t) / total).toFixed(1).padStart(5)}%`;
const show = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, t] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(t)}  ${k}`);
};
console.log(`${(total / 1e6).toFixed(1)} s busy, ${(idle / 1e6).toFixed(1)} s idle`);
show('self time by place', byPlace);
show('inclusive time by place', inclusive);
show('self time by function', byFunction);
show('inclusive time by function of src/', ownInclusive);
