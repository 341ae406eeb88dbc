import { defineNode } from '../types.ts';
import { bodyGraphs, calledWorkflow, mapProblems } from './rules.ts';

export const map = defineNode({
  type: 'map',
  schema: 'MapNode',
  label: 'map',
  docs: 'runs a sub-graph (or a workflow) once per item of the list coming in; its output is the list of results, in order',
  calledWorkflow,
  innerGraphs: bodyGraphs,
  graphProblems: mapProblems,
});
