// The page's sign-in through the server's identity provider (docs/oauth.md, "How the page signs
// in"): OAuth 2.1 authorization code with PKCE (S256) as the public client that
// `redmark serve --page-client-id` names; the state and verifier wait in sessionStorage.

/** sessionStorage key of the sign-in under way (state, verifier, endpoints, the day shown). */
const PENDING_KEY = 'redmark.signin';
/** Where the server says which client id the page signs in as (only with --page-client-id). */
const CONFIG_PATH = '/web/signin.json';
/** Random bytes in `state` and in the PKCE verifier (43 characters of base64url). */
const RANDOM_BYTES = 32;
/** The parameters a provider's answer puts in the page's address. */
const ANSWER_PARAMS = ['code', 'state', 'iss', 'error', 'error_description', 'error_uri', 'session_state'];

/** Why signing in did not work, in words. */
export class SignInFailure extends Error {}

function b64url(bytes) {
  let bin = '';
  for (const b of new Uint8Array(bytes)) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const randomText = () => b64url(crypto.getRandomValues(new Uint8Array(RANDOM_BYTES)));

/** The PKCE S256 challenge of `verifier` (RFC 7636 §4.2). */
async function s256(verifier) {
  if (!crypto.subtle) {
    throw new SignInFailure('This page cannot sign in here: PKCE needs a secure context (https://, or http:// on this machine).');
  }
  return b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
}

/** The client id the server names for the page (`--page-client-id`), or null. */
export async function pageClientId() {
  try {
    const r = await fetch(CONFIG_PATH, { cache: 'no-store' });
    if (r.status !== 200) return null;
    const c = await r.json();
    return typeof c.client_id === 'string' && c.client_id ? c.client_id : null;
  } catch {
    return null;
  }
}

/** The authorization server's metadata: RFC 8414's address first, then OpenID discovery. */
async function serverMetadata(issuer) {
  const u = new URL(issuer);
  const tries = [
    `${u.origin}/.well-known/oauth-authorization-server${u.pathname.replace(/\/$/, '')}`,
    `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`,
  ];
  for (const url of tries) {
    let meta;
    try {
      const r = await fetch(url, { cache: 'no-store' });
      if (r.status !== 200) continue;
      meta = await r.json();
    } catch {
      continue; // Not there, not readable from this origin (CORS), or not JSON: the next.
    }
    if (!meta || meta.issuer !== issuer) {
      throw new SignInFailure(`${url} names issuer ${JSON.stringify(meta && meta.issuer)}, not ${issuer}: the page does not sign in there.`);
    }
    return meta;
  }
  throw new SignInFailure(`The identity provider ${issuer} publishes no metadata this page can read (${tries.join(', ')}): ` +
    'is it running, does it allow this page\'s origin (CORS), and was redmark serve given --page-client-id?');
}

/**
 * Sends the browser to the provider's sign-in for the resource that `meta` (its
 * protected-resource metadata) describes, as the public client `clientId`; `day` is the day
 * shown, for the way back.
 */
export async function signIn(meta, clientId, day) {
  const servers = Array.isArray(meta.authorization_servers) ? meta.authorization_servers : [];
  if (!servers.length) throw new SignInFailure('The server names no authorization server to sign in at.');
  const issuer = servers[0];
  const as = await serverMetadata(issuer);
  if (typeof as.authorization_endpoint !== 'string' || typeof as.token_endpoint !== 'string') {
    throw new SignInFailure(`The identity provider ${issuer} has no authorization or token endpoint.`);
  }
  const methods = as.code_challenge_methods_supported;
  if (Array.isArray(methods) && !methods.includes('S256')) {
    throw new SignInFailure(`The identity provider ${issuer} does not offer PKCE with S256, which this page needs.`);
  }
  const state = randomText();
  const verifier = randomText();
  const redirect = `${location.origin}/`;
  const scopes = Array.isArray(meta.scopes_supported) ? meta.scopes_supported : [];
  const pending = { state, verifier, issuer, tokenEndpoint: as.token_endpoint, clientId, redirect, resource: meta.resource, day };
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  const url = new URL(as.authorization_endpoint);
  const params = {
    response_type: 'code', client_id: clientId, redirect_uri: redirect, scope: ['openid', ...scopes].join(' '),
    state, code_challenge: await s256(verifier), code_challenge_method: 'S256',
  };
  if (typeof meta.resource === 'string') params.resource = meta.resource;
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  location.assign(url.href);
}

/**
 * When the provider has sent the browser back (`?code=…&state=…`, or `?error=…`): exchanges
 * the code for { token, issuer }, after checking `state` (and `iss`) against the sign-in this
 * tab started. Null when the address holds no answer. Either way the answer leaves the address.
 */
export async function finishSignIn() {
  const q = new URLSearchParams(location.search);
  if (!q.has('code') && !q.has('error')) return null;
  let pending = null;
  try {
    pending = JSON.parse(sessionStorage.getItem(PENDING_KEY) || 'null');
  } catch {
    // Unreadable: as if none.
  }
  sessionStorage.removeItem(PENDING_KEY);
  const clean = new URL(location.href);
  for (const k of ANSWER_PARAMS) clean.searchParams.delete(k);
  if (pending && pending.day && !clean.searchParams.has('day')) clean.searchParams.set('day', pending.day);
  history.replaceState(null, '', clean);
  if (!pending || typeof pending.state !== 'string') {
    throw new SignInFailure('The address holds a sign-in answer this tab did not ask for: nothing was used. Press Sign in again.');
  }
  if (q.get('state') !== pending.state) {
    throw new SignInFailure('The sign-in answer does not belong to the sign-in this tab started (its state differs): nothing was used. Press Sign in again.');
  }
  if (q.has('iss') && q.get('iss') !== pending.issuer) {
    throw new SignInFailure(`The sign-in answer comes from ${q.get('iss')}, not ${pending.issuer}: nothing was used.`);
  }
  if (q.has('error')) {
    const why = q.get('error_description') ? `: ${q.get('error_description')}` : '';
    throw new SignInFailure(`The identity provider did not sign you in (${q.get('error')}${why}).`);
  }
  const body = new URLSearchParams({
    grant_type: 'authorization_code', code: q.get('code'), redirect_uri: pending.redirect,
    client_id: pending.clientId, code_verifier: pending.verifier,
  });
  if (typeof pending.resource === 'string') body.set('resource', pending.resource);
  let r;
  let answer;
  try {
    r = await fetch(pending.tokenEndpoint, { method: 'POST', body, cache: 'no-store' });
    answer = await r.json();
  } catch (e) {
    throw new SignInFailure(`The token request to ${pending.tokenEndpoint} failed (${e.message}): the provider must allow ` +
      'this page\'s origin (CORS), and the page\'s policy the provider\'s origin (redmark serve --page-client-id).');
  }
  if (!r.ok || !answer || typeof answer.access_token !== 'string') {
    const why = [answer && answer.error, answer && answer.error_description].filter(Boolean).join(': ');
    throw new SignInFailure(`The identity provider refused to give this page a token (HTTP ${r.status}${why ? `, ${why}` : ''}).`);
  }
  return { token: answer.access_token, issuer: pending.issuer };
}

/** The `sub` a JWT access token names, read without checking it (to show who is signed in). */
export function tokenSubject(token) {
  try {
    const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    const bin = atob(part.padEnd(Math.ceil(part.length / 4) * 4, '='));
    const sub = JSON.parse(new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)))).sub;
    return typeof sub === 'string' ? sub : null;
  } catch {
    return null;
  }
}
