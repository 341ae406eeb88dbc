// Each generator's command, as docs/generators.md prints it and as `npm run test:generators` runs
// it (test/contract/generatorGuide.unit.test.ts holds the guide to these): `openapi.yaml` stands for the
// contract and the output folder is the integrator's choice.

export const OPENAPI_GENERATOR_VERSION = '7.25.0';
export const OAPI_CODEGEN = 'github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2';
export const OPENAPI_PYTHON_CLIENT = 'openapi-python-client==0.29.1';

export interface GeneratorCommand {
  /** The client's name in the job and the guide. */
  name: string;
  /** The command line; `openapi-generator-cli` is the jar (`java -jar openapi-generator-cli-VERSION.jar`). */
  argv: string[];
  /** The output folder's name in argv (the job swaps in its own). */
  out: string;
}

const openapiGenerator = (generator: string, out: string, ...options: string[]): GeneratorCommand => ({
  name: `openapi-generator ${generator}`,
  argv: [
    'openapi-generator-cli',
    'generate',
    '-i',
    'openapi.yaml',
    '-g',
    generator,
    '-o',
    out,
    '--skip-validate-spec',
    ...options,
  ],
  out,
});

export const COMMANDS = {
  python: openapiGenerator('python', 'client-python', '--package-name', 'openauth_client'),
  go: openapiGenerator(
    'go',
    'client-go',
    '--package-name',
    'openauth',
    '--git-user-id',
    'openauth',
    '--git-repo-id',
    'client',
    '-p',
    'useOneOfDiscriminatorLookup=true,disallowAdditionalPropertiesIfNotPresent=false',
  ),
  typescriptFetch: openapiGenerator('typescript-fetch', 'client-ts', '-p', 'supportsES6=true,importFileExtension=.js'),
  java: openapiGenerator(
    'java',
    'client-java',
    '--library',
    'native',
    '-p',
    'containerDefaultToNull=true,invokerPackage=openauth.client,apiPackage=openauth.client.api,modelPackage=openauth.client.model,hideGenerationTimestamp=true',
  ),
  openapiPythonClient: {
    name: 'openapi-python-client',
    argv: [
      'openapi-python-client',
      'generate',
      '--path',
      'openapi.yaml',
      '--output-path',
      'openauth_opc',
      '--meta',
      'none',
      '--overwrite',
    ],
    out: 'openauth_opc',
  },
  oapiCodegen: {
    name: 'oapi-codegen',
    argv: [
      'go',
      'run',
      OAPI_CODEGEN,
      '-generate',
      'types,client',
      '-package',
      'client',
      '-o',
      'client.gen.go',
      'openapi.yaml',
    ],
    out: 'client.gen.go',
  },
} satisfies Record<string, GeneratorCommand>;

/** The command as one shell line, as the guide prints it. */
export const commandLine = (c: GeneratorCommand): string => c.argv.join(' ');
