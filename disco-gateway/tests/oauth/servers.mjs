// The servers of the OAuth end-to-end test (tests/oauth.rs), all on 127.0.0.1:
//
// - an authorization server: oidc-provider (pinned by .ci/run), with dynamic client
//   registration (RFC 7591), PKCE required, refresh tokens, resource indicators (RFC 8707) and
//   short-lived access tokens; its interaction approves at once (login and consent) instead of
//   showing a form;
// - an MCP server (Streamable HTTP, JSON answers) that takes only the access tokens the
//   authorization server issued for it, and answers any other request 401 with its protected
//   resource metadata (RFC 9728) named in `WWW-Authenticate`; its one tool, `whoami`, answers
//   the signed-in account;
// - with STATIC_REDIRECT set, a client registered beforehand: `static-client`, confidential
//   (its secret STATIC_SECRET, sent with HTTP Basic), redirected to STATIC_REDIRECT;
//   With PUBLIC_LISTING set, it answers `initialize`, `ping` and `tools/list` without a token
//   too (as servers that let anyone see what they offer do), and asks for one on `tools/call`;
// - an MCP server without authorization (`/open/mcp`), the gateway's other upstream;
// - `/control/stats` (what the authorization server did) and `/control/revoke` (every grant
//   seen is revoked, its access and refresh tokens with it).
//
// Prints one line of JSON with the addresses once both listen.
import http from 'node:http';
import { once } from 'node:events';
import { pathToFileURL } from 'node:url';

// oidc-provider from where .ci/run installed it (the test passes its entry point).
const { default: Provider } = await import(pathToFileURL(process.env.OIDC_PROVIDER).href);

const ACCOUNT = 'user-1';
const ACCESS_TTL = Number(process.env.ACCESS_TTL || 4);

const listen = async (handler) => {
  const server = http.createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
};

let provider;
const as = await listen((req, res) => {
  if (req.url.startsWith('/interaction/')) {
    interaction(req, res).catch((e) => {
      res.statusCode = 500;
      res.end(String(e));
    });
  } else {
    provider.callback()(req, res);
  }
});
const issuer = `http://127.0.0.1:${as.address().port}`;

const stats = { registrations: 0, grants: {}, pkce: [], seen: new Set(), refused: 0, metadata: 0 };

let rsBase;
provider = new Provider(issuer, {
  scopes: ['openid', 'offline_access', 'mcp'],
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => `${rsBase}/mcp`,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        if (indicator !== `${rsBase}/mcp`) throw new Error(`unknown resource ${indicator}`);
        return { scope: 'mcp', accessTokenFormat: 'opaque', accessTokenTTL: ACCESS_TTL };
      },
    },
  },
  issueRefreshToken: async () => true,
  clients: process.env.STATIC_REDIRECT
    ? [{
      client_id: 'static-client',
      client_secret: process.env.STATIC_SECRET,
      token_endpoint_auth_method: 'client_secret_basic',
      application_type: 'native',
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: [process.env.STATIC_REDIRECT],
    }]
    : [],
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  findAccount: async (ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
});
provider.on('registration_create.success', () => { stats.registrations += 1; });
provider.on('grant.success', (ctx) => {
  const type = ctx.oidc.params.grant_type;
  stats.grants[type] = (stats.grants[type] || 0) + 1;
});
provider.on('authorization.accepted', (ctx) => {
  stats.pkce.push(ctx.oidc.params.code_challenge_method || null);
});

// Approves at once: the login as ACCOUNT, then the consent to what was asked.
async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params } = details;
  if (prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: ACCOUNT } }, { mergeWithLastSubmission: false });
    return;
  }
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: ACCOUNT, clientId: params.client_id });
  const missing = prompt.details || {};
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes || {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

const json = (res, status, body, headers = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

const readBody = async (req) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
};

// A JSON-RPC answer of an MCP server with the tools `whoami` and `slow` answering `who`.
const mcp = async (req, res, who, read) => {
  if (req.method !== 'POST') return json(res, 405, {});
  const msg = read ?? JSON.parse(await readBody(req));
  if (msg.id === undefined) { res.writeHead(202); return res.end(); }
  const ok = (result) => json(res, 200, { jsonrpc: '2.0', id: msg.id, result });
  switch (msg.method) {
    case 'initialize':
      return ok({
        protocolVersion: msg.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: 'oauth-test', version: '1.0.0' },
      });
    case 'ping':
      return ok({});
    case 'tools/list':
      return ok({ tools: [
        { name: 'whoami', description: 'Who the call is made as.', inputSchema: { type: 'object' } },
        { name: 'slow', description: 'Who the call is made as, after `ms` milliseconds.', inputSchema: { type: 'object', properties: { ms: { type: 'number' } } } },
      ] });
    case 'tools/call':
      if (msg.params.name === 'slow') await new Promise((r) => setTimeout(r, Number(msg.params.arguments?.ms) || 0));
      return ok({ content: [{ type: 'text', text: who }] });
    default:
      return json(res, 200, { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'no such method' } });
  }
};

const rs = await listen(async (req, res) => {
  try {
    const path = req.url.split('?')[0];
    // The protected-resource metadata is only where the 401's challenge says (not at the
    // RFC 9728 well-known paths): a client that finds it went through the challenge.
    const metadata = `${rsBase}/meta/resource-7c1e`;
    if (path === '/meta/resource-7c1e') {
      stats.metadata += 1;
      return json(res, 200, {
        resource: `${rsBase}/mcp`,
        authorization_servers: [issuer],
        scopes_supported: ['mcp'],
        bearer_methods_supported: ['header'],
      });
    }
    if (path === '/open/mcp') return mcp(req, res, 'anyone');
    if (path === '/control/stats') {
      return json(res, 200, { ...stats, seen: stats.seen.size });
    }
    if (path === '/control/revoke') {
      for (const grantId of grantsSeen) {
        await provider.AccessToken.adapter.revokeByGrantId(grantId);
        await provider.RefreshToken.adapter.revokeByGrantId(grantId);
      }
      return json(res, 200, { revoked: grantsSeen.size });
    }
    if (path !== '/mcp') return json(res, 404, {});
    const auth = req.headers.authorization || '';
    const value = auth.startsWith('Bearer ') ? auth.slice(7) : null;
    const token = value ? await provider.AccessToken.find(value) : undefined;
    if (!token || token.aud !== `${rsBase}/mcp` || !String(token.scope).split(' ').includes('mcp')) {
      if (process.env.PUBLIC_LISTING && !value && req.method === 'POST') {
        const msg = JSON.parse(await readBody(req));
        if (msg.method !== 'tools/call') return mcp(req, res, 'nobody', msg);
      }
      stats.refused += 1;
      const error = value ? ', error="invalid_token"' : '';
      return json(res, 401, { error: 'unauthorized' }, {
        'www-authenticate': `Bearer resource_metadata="${metadata}", scope="mcp"${error}`,
      });
    }
    stats.seen.add(value);
    grantsSeen.add(token.grantId);
    return mcp(req, res, token.accountId);
  } catch (e) {
    json(res, 500, { error: String(e) });
  }
});
const grantsSeen = new Set();
rsBase = `http://127.0.0.1:${rs.address().port}`;

console.log(JSON.stringify({ issuer, mcp: `${rsBase}/mcp`, open: `${rsBase}/open/mcp`, control: `${rsBase}/control` }));
