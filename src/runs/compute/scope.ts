// The part of a run's scope a template reads: a computation gets only the texts it names, so a
// long chain does not copy every upstream text into the compute process for each node.
import { LRUCache } from 'lru-cache';
import { analyseTemplate, type TemplateScope } from '../../workflows/templates.ts';

/** Per template source: the inputs and nodes it reads, or null for "all" (a reference without a name). */
interface Reads {
  inputs: string[] | null;
  nodes: string[] | null;
}

const readsBySource = new LRUCache<string, Reads>({ max: 512 });

function readsOf(source: string): Reads {
  let reads = readsBySource.get(source);
  if (reads) return reads;
  const check = analyseTemplate(source);
  reads = { inputs: [], nodes: [] };
  if (!check.ok)
    reads = { inputs: null, nodes: null }; // the render reports the problem
  else {
    for (const [root, name] of check.references) {
      const key = root === 'inputs' ? 'inputs' : root === 'nodes' ? 'nodes' : undefined;
      if (!key) continue;
      if (name === undefined) reads[key] = null;
      else reads[key]?.push(name);
    }
  }
  readsBySource.set(source, reads);
  return reads;
}

const pick = <T>(all: Record<string, T>, names: string[] | null): Record<string, T> =>
  names === null ? all : Object.fromEntries(names.filter((n) => Object.hasOwn(all, n)).map((n) => [n, all[n]!]));

export function scopeFor(source: string, scope: TemplateScope): TemplateScope {
  const reads = readsOf(source);
  // `run` and `workflow` are a few short strings: passed whole.
  const context = { ...(scope.run ? { run: scope.run } : {}), ...(scope.workflow ? { workflow: scope.workflow } : {}) };
  return { inputs: pick(scope.inputs, reads.inputs), nodes: pick(scope.nodes, reads.nodes), ...context };
}
