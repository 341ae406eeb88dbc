// The steps of a run's own nodes that list their calls (an agent's tool calls, `<agent>[<n>].<tool>`):
// unlike the steps inside a map's items, which share their shape but may be thousands, they send
// their events (eventLog.ts), so a run's stream shows each tool call as it starts and ends.
import { findNodeDefinition } from '../nodes/registry.ts';

/** `<node>[<n>].<name>`, one level deep (node ids and tool names hold no dots or brackets). */
const CALL_STEP = /^([A-Za-z0-9_-]+)\[\d+\]\.[A-Za-z0-9_-]+$/;

/** Whether a step id is a call of one of these nodes (a graph's own, not inside a map or a called workflow). */
export function callStepsOf(nodes: readonly { id: string; type: string }[]): (stepId: string) => boolean {
  const callers = new Set(nodes.filter((n) => findNodeDefinition(n.type)?.listsCalls).map((n) => n.id));
  return (stepId) => {
    const match = CALL_STEP.exec(stepId);
    return match !== null && callers.has(match[1]!);
  };
}
