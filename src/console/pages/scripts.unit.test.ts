import { describe, expect, it } from 'vitest';
import { consoleScripts } from './scripts.ts';

// The console's scripts are built from src/console/browser/ in memory when the pages router is
// made: one classic script per page entry, minified in production, with an inline source map
// elsewhere. The served responses are proven in ../scriptsServed.test.ts.

/** Parses the text as a classic script's body: an `import` or `export` left by the bundler throws. */
const parsesAsClassicScript = (text: string) => () => new Function(text);

describe('the console scripts, bundled by esbuild', () => {
  it('builds console.js and editor.js, each a classic script with everything it imports inside', async () => {
    const scripts = await consoleScripts(false);
    expect([...scripts.keys()].sort()).toEqual(['console.js', 'editor.js']);
    for (const [name, text] of scripts) {
      expect(parsesAsClassicScript(text), name).not.toThrow();
      expect(text, name).not.toMatch(/^\s*(import|export)\s/m);
    }
    // The shared formatters come along, not a copy: the module's own words are in the bundle.
    expect(scripts.get('console.js')).toContain('src/console/format.ts');
    expect(scripts.get('editor.js')).toContain('src/console/browser/editor/fields.ts');
    // The canvas (TSX) and its library, bundled in: nothing fetched from elsewhere at run time.
    expect(scripts.get('editor.js')).toContain('src/console/browser/canvas/Canvas.tsx');
    expect(scripts.get('editor.js')).toContain('node_modules/@xyflow/react/');
    expect(scripts.get('console.js')).not.toContain('@xyflow');
  });

  it('outside production carries an inline source map; in production it is minified and has none', async () => {
    const development = await consoleScripts(false);
    const production = await consoleScripts(true);
    for (const name of ['console.js', 'editor.js']) {
      expect(development.get(name), name).toMatch(/\/\/# sourceMappingURL=data:application\/json;base64,/);
      expect(production.get(name), name).not.toContain('sourceMappingURL');
      expect(parsesAsClassicScript(production.get(name)!), name).not.toThrow();
      expect(production.get(name)!.length, name).toBeLessThan(development.get(name)!.length / 3);
      // React's development checks are read off process.env.NODE_ENV, which esbuild sets: no `process` in a browser.
      expect(production.get(name), name).not.toMatch(/process\.env/);
    }
  });

  it('builds once per process and mode', () => {
    expect(consoleScripts(true)).toBe(consoleScripts(true));
    expect(consoleScripts(false)).not.toBe(consoleScripts(true));
  });
});
