// A real OAuth 2.1 / OpenID authorization server for tests/tests/oauth.rs: oidc-provider (npm,
// pinned in package-lock.json, installed by scripts/oauth-peer.sh into target/oauth-peer/),
// with resource indicators (RFC 8707) issuing JWT access tokens (RFC 9068) and the
// client-credentials grant, on loopback.
//
// usage: node server.mjs --keys FILE [--port N] [--issuer URL] [--kid KID] [--rotate]
//                        --resource URL [--resource URL ...]
//   --keys FILE  the signing keys (private JWKs); made (one RS256 key) if FILE does not exist
//   --kid KID    the kid of a key made here (default: random)
//   --rotate     make a new key and put it first (it signs; the old ones stay published)
//   --issuer     default http://127.0.0.1:PORT
//   --page-redirect URL  register the booking page as a public client (below) redirecting to URL
// Prints `listening PORT ISSUER` on stdout once it accepts connections; stops on SIGTERM or
// when stdin closes (so a test that dies leaves nothing behind).
//
// Clients (client_secret_basic): alice and bob (scope rooms:read rooms:write), reader (scope
// rooms:read only), brief (like alice, tokens live 1 s), olga (also rooms:operate). Secret: `<id>-secret-0123456789`.
// With --page-redirect: redmark-page, a public client (no secret) of the authorization code
// grant with PKCE, whose token endpoint answers the page's origin (CORS); people sign in
// through oidc-provider's development login and consent pages (any login name and password:
// the login name becomes `sub`, as a client id does in a client-credentials token).

import { randomUUID, generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = process.env.REDMARK_OAUTH_PEER_DIR;
if (!dir) throw new Error('REDMARK_OAUTH_PEER_DIR must name the folder scripts/oauth-peer.sh installed');
const { default: Provider, errors } = await import(
  pathToFileURL(join(dir, 'node_modules/oidc-provider/lib/index.js')).href
);

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const resources = args.flatMap((a, i) => (a === '--resource' ? [args[i + 1]] : []));
const pageRedirects = args.flatMap((a, i) => (a === '--page-redirect' ? [args[i + 1]] : []));
const keysFile = opt('--keys');
if (!keysFile || resources.length === 0) throw new Error('--keys FILE and --resource URL are required');

const makeKey = (kid) => ({
  ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }),
  kid: kid ?? randomUUID(),
  alg: 'RS256',
  use: 'sig',
});
let keys = existsSync(keysFile) ? JSON.parse(readFileSync(keysFile, 'utf8')).keys : [makeKey(opt('--kid'))];
if (args.includes('--rotate')) keys = [makeKey(opt('--kid')), ...keys];
writeFileSync(keysFile, JSON.stringify({ keys }), { mode: 0o600 });

const server = createServer();
await new Promise((ok) => server.listen(Number(opt('--port') ?? 0), '127.0.0.1', ok));
const port = server.address().port;
const issuer = opt('--issuer') ?? `http://127.0.0.1:${port}`;

const SCOPES = 'rooms:read rooms:write';
// olga may also ask for the operator scope (redmark's --operator-scope default).
const OPERATOR_SCOPES = `${SCOPES} rooms:operate`;
const client = (id, scope) => ({
  client_id: id,
  client_secret: `${id}-secret-0123456789`,
  grant_types: ['client_credentials'],
  redirect_uris: [],
  response_types: [],
  scope,
});

const PAGE_CLIENT = 'redmark-page';
const pageClient = {
  client_id: PAGE_CLIENT,
  token_endpoint_auth_method: 'none',
  grant_types: ['authorization_code'],
  response_types: ['code'],
  redirect_uris: pageRedirects,
  scope: `openid ${SCOPES}`,
};

// The in-memory store is what a test wants (tokens are JWTs; nothing needs to outlive the
// process): its start-up warning would only be noise in every test's output.
const warn = console.warn;
console.warn = (...a) => {
  const text = String(a[0]);
  if (!text.includes('in-memory adapter') && !text.includes('devInteractions')) warn(...a);
};
const provider = new Provider(issuer, {
  clients: [
    client('alice', SCOPES),
    client('bob', SCOPES),
    client('reader', 'rooms:read'),
    client('brief', SCOPES),
    client('olga', OPERATOR_SCOPES),
    ...(pageRedirects.length ? [pageClient] : []),
  ],
  // The page's token request is a cross-origin fetch: allowed from its redirect URIs' origins.
  clientBasedCORS: (_ctx, origin, c) =>
    c.clientAuthMethod === 'none' && c.redirectUris.some((u) => URL.parse(u)?.origin === origin),
  jwks: { keys },
  scopes: OPERATOR_SCOPES.split(' '),
  features: {
    devInteractions: { enabled: pageRedirects.length > 0 },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource, c) => {
        if (!resources.includes(resource)) throw new errors.InvalidTarget();
        return {
          scope: OPERATOR_SCOPES,
          audience: resource,
          accessTokenTTL: c.clientId === 'brief' ? 1 : 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
});
provider.on('server_error', (_ctx, e) => console.error('oidc-provider:', e));
server.on('request', provider.callback());
console.log(`listening ${port} ${issuer}`);

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
