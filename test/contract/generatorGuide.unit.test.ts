// The generator guide (docs/generators.md) gives exactly the commands CI's generator job runs
// (contract-tests/generators/commands.ts, used by scripts/generators.ts).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMMANDS, commandLine } from '../../contract-tests/generators/commands.ts';

const guide = readFileSync(new URL('../../docs/generators.md', import.meta.url), 'utf8');
const shellLines = [...guide.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.trim().split('\n'));

describe('docs/generators.md', () => {
  it.each(Object.values(COMMANDS).map((c) => [c.name, c] as const))(
    'gives the command CI runs for %s',
    (_name, command) => {
      expect(shellLines).toContain(commandLine(command));
    },
  );

  it('gives no other generator command than those CI runs', () => {
    expect(shellLines.sort()).toEqual(Object.values(COMMANDS).map(commandLine).sort());
  });

  it('is linked from the README', () => {
    expect(readFileSync(new URL('../../README.md', import.meta.url), 'utf8')).toContain('(docs/generators.md)');
  });
});
