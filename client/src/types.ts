import type { Client } from 'openapi-fetch';
import type { components, operations, paths } from '../../generated/api.d.ts';

export type { components, operations, paths };
export type ApiClient = Client<paths>;
export type Schemas = components['schemas'];
