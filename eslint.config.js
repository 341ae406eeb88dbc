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
  // The console's script runs in the browser, as a classic script (src/console/assets/).
  { files: ['src/console/assets/**/*.js'], languageOptions: { globals: globals.browser, sourceType: 'script' } },
);
