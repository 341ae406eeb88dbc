// The docs site (`npm run docs:build`, `npm run docs:dev`). The build fails on a link to a page
// that does not exist (VitePress's default; ignoreDeadLinks stays off), which is how CI checks the
// docs' internal links. Output and cache stay in git-ignored folders beside this file.
import { defineConfig } from 'vitepress';

// A page that fails to render (a `{{ ... }}` Vue cannot evaluate, say) is only logged by Vue, and
// would ship empty: count what the build logs as an error, and fail it at the end.
const errorsLogged: unknown[] = [];
const logError = console.error.bind(console);
console.error = (...args: unknown[]) => {
  errorsLogged.push(args[0]);
  logError(...args);
};

export default defineConfig({
  title: 'OpenAuth Workflows',
  description: 'OAuth 2.0 provider, open token interfaces and a workflows API, in one service',
  srcExclude: ['upstream/**'],
  cleanUrls: true,
  lastUpdated: false,
  markdown: {
    // The docs quote Liquid templates (`{{ inputs.ticket }}`) in inline code: keep Vue from reading
    // them as its own interpolation, as VitePress already does for fenced code.
    config: (md) => {
      const codeInline = md.renderer.rules.code_inline!;
      md.renderer.rules.code_inline = (...args) => codeInline(...args).replace(/^<code/, '<code v-pre');
    },
  },
  buildEnd() {
    if (errorsLogged.length > 0) throw new Error(`the docs build logged ${errorsLogged.length} error(s): see above`);
  },
  themeConfig: {
    search: { provider: 'local' },
    nav: [
      { text: 'Getting started', link: '/getting-started' },
      { text: 'Workflows', link: '/workflows/' },
      { text: 'Operating', link: '/operating' },
      { text: 'Architecture', link: '/architecture' },
    ],
    sidebar: [
      { text: 'Start', items: [{ text: 'Getting started', link: '/getting-started' }] },
      {
        text: 'Use',
        items: [
          { text: 'Workflows', link: '/workflows/' },
          { text: 'Node reference', link: '/workflows/nodes' },
          { text: 'OAuth and OpenID Connect', link: '/oauth' },
          { text: 'MCP', link: '/mcp' },
        ],
      },
      {
        text: 'Integrate and test',
        items: [
          { text: 'Integrators', link: '/integrators' },
          { text: 'Generator guide', link: '/generators' },
          { text: 'QA', link: '/qa' },
        ],
      },
      {
        text: 'Run and change',
        items: [
          { text: 'Operating', link: '/operating' },
          { text: 'Architecture', link: '/architecture' },
          { text: 'Benchmarks', link: '/benchmarks' },
          { text: 'Benchmark history', link: '/benchmarks-history' },
        ],
      },
    ],
  },
});
