/**
 * Where the contract suite points and with which credentials. Against the Prism mock any
 * well-formed credential passes; against the live service they come from the environment
 * (contract-tests/run.ts prepares them with the admin CLI and the real OAuth flow).
 */
export interface ContractTarget {
  baseUrl: string;
  mock: boolean;
  apiKey: string;
  accessToken: string;
  refreshToken: string;
  clientId: string;
  clientSecret: string;
  namespace: string;
  tokenId: number;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set; run the suite with npm run test:contract -- --target URL`);
  return value;
}

export function contractTarget(): ContractTarget {
  const baseUrl = required('CONTRACT_TARGET');
  const mock = process.env.CONTRACT_MOCK === '1';
  if (mock) {
    return {
      baseUrl,
      mock,
      apiKey: 'sk_mock',
      accessToken: 'gho_mock',
      refreshToken: 'ghr_mock',
      clientId: 'app_mock',
      clientSecret: 'cs_mock',
      namespace: 'demo',
      tokenId: 42,
    };
  }
  return {
    baseUrl,
    mock,
    apiKey: required('CONTRACT_API_KEY'),
    accessToken: required('CONTRACT_ACCESS_TOKEN'),
    refreshToken: required('CONTRACT_REFRESH_TOKEN'),
    clientId: required('CONTRACT_CLIENT_ID'),
    clientSecret: required('CONTRACT_CLIENT_SECRET'),
    namespace: required('CONTRACT_NAMESPACE'),
    tokenId: Number(required('CONTRACT_TOKEN_ID')),
  };
}
