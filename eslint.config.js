import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'generated/', '.data/', '.tools/', '.venv/', 'artifacts/', 'client/dist/'] },
  { ignores: ['docs/.vitepress/dist/', 'docs/.vitepress/cache/', 'docs/.vitepress/.temp/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  // The console's scripts run in the browser (src/console/browser/, bundled by src/console/pages/scripts.ts).
  { files: ['src/console/browser/**/*.{ts,tsx}'], languageOptions: { globals: globals.browser } },
);
