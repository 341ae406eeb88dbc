// `npm run docs:nodes`: writes the docs site's node reference from the registry and openapi.yaml.
// scripts/docs/nodeReference.unit.test.ts fails when the committed page is not what this writes.
import { writeFileSync } from 'node:fs';
import { NODE_REFERENCE_PATH, readContractSchemas, renderNodeReference } from './docs/nodeReference.ts';

writeFileSync(NODE_REFERENCE_PATH, renderNodeReference(readContractSchemas()));
console.log(`wrote ${NODE_REFERENCE_PATH}`);
