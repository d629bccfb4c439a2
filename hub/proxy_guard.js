/*
 * The course's rules at the hub's front door, loaded into its proxy (configurable-http-proxy)
 * with node's --require (hub/jupyterhub_config.py; hub/setup.sh copies this file beside it).
 * docs/jupyterhub.md, "One name per account", says why; tests/system/test_hub.py runs each
 * rule as a student's attack.
 *
 * 1. The hub's pages on the hub's name only. JupyterHub's proxy sends every path of a user's
 *    name (alice.HUB) but /user/alice/ to the hub, so the hub's real login form and its API
 *    answered on alice's origin, where her own page could open them in a popup, read what the
 *    instructor typed and mint a token for him. Here a request to a user's name for any other
 *    path, and to any name that is neither the hub's nor a user's, goes to the hub's own name
 *    (a redirect for a page, 404 otherwise): only /user/NAME/ is served on NAME.HUB.
 * 2. Only the cookies the destination reads. Any user's page can set cookies for the hub's
 *    parent name, which every browser then sends to the hub and to every user's server: thirty
 *    large ones made every request of every visitor fail (431) for a year, and a login cookie of
 *    her own logged the instructor in as her. Here a request keeps only the cookies its
 *    destination reads: over https those whose name starts with __Host- (the browser lets only
 *    that very name set them: the hub's login and each server's own), and JupyterHub's two
 *    cookies shared between names, _xsrf and jupyterhub-session-id (signed and bound to the
 *    login: a forged one logs no one in, and JupyterHub passes over an _xsrf it did not sign);
 *    over plain http (a hub tried on this machine) the hub's and that user's cookie names.
 *    One cookie of each name (a few of the two shared ones), a few OAuth states at most.
 * 3. Over https, Strict-Transport-Security on every answer: browsers use https for the hub and
 *    every name under it from then on.
 *
 * Configured by the environment hub/jupyterhub_config.py gives the proxy: KVLESSON_HUB_HOST
 * (the hub's name), KVLESSON_HUB_PORT (the public port: the proxy's API port is not guarded)
 * and KVLESSON_HUB_PUBLIC (the hub's public address). Node's own limit on a request's headers
 * is raised by the same command line (--max-http-header-size), so that the cookies are read
 * and dropped here rather than answered with 431.
 */
'use strict';

const http = require('http');
const https = require('https');

const HUB = (process.env.KVLESSON_HUB_HOST || '').toLowerCase();
const PORT = Number(process.env.KVLESSON_HUB_PORT || 0);
const PUBLIC = process.env.KVLESSON_HUB_PUBLIC || '';
const SECURE = PUBLIC.startsWith('https://');
const SHARED = new Set(['_xsrf', 'jupyterhub-session-id']); // JupyterHub's, on every name
const SHARED_MOST = 4; // of each shared name, in the browser's order (see keepOwnCookies)
const STATES = 4; // OAuth state cookies of one server kept: logins in a few tabs at once
const HSTS = 'max-age=31536000; includeSubDomains';

/* Whose name a request is for: '' the hub's, the account for a user's name, null another. */
function accountOf(request) {
  const host = String(request.headers.host || '').toLowerCase().replace(/:\d+$/, '');
  if (host === HUB) return '';
  if (HUB && host.endsWith('.' + HUB)) {
    const label = host.slice(0, -(HUB.length + 1));
    if (/^[a-z0-9_-]+$/.test(label)) return label;
  }
  return null;
}

/* Whether the request's path is the account's own server's: /user/NAME or below it. */
function onOwnPath(account, url) {
  const path = String(url || '/').split('?')[0];
  const own = `/user/${account}`;
  return path === own || path.startsWith(own + '/');
}

/* Whether a cookie of this name reaches the name `account` (see rule 2). */
function readHere(name, account) {
  if (SHARED.has(name)) return true;
  if (SECURE) return name.startsWith('__Host-');
  if (account === '') return name === 'jupyterhub-hub-login';
  const own = `jupyterhub-user-${account}`;
  return name === own || name.startsWith(own + '-oauth-state');
}

/* The request's cookies, only those its destination reads: one of each name, but for the
   two names JupyterHub shares between names, of which a few are kept in the browser's order
   (JupyterHub takes the first _xsrf it signed itself, so one a page set passes over). */
function keepOwnCookies(request, account) {
  const header = request.headers.cookie;
  if (!header) return;
  const seen = new Map();
  const kept = [];
  let states = 0;
  for (const part of String(header).split(';')) {
    const pair = part.trim();
    const name = pair.split('=', 1)[0].trim();
    if (!pair || !readHere(name, account)) continue;
    const times = (seen.get(name) || 0) + 1;
    if (times > (SHARED.has(name) ? SHARED_MOST : 1)) continue;
    if (name.includes('-oauth-state') && ++states > STATES) continue;
    seen.set(name, times);
    kept.push(pair);
  }
  if (kept.length) request.headers.cookie = kept.join('; ');
  else delete request.headers.cookie;
}

/* Send a request that is not for this name to the hub's own name (rule 1). */
function elsewhere(event, request, answer) {
  if (event === 'upgrade') {
    answer.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    return;
  }
  if (request.method === 'GET' || request.method === 'HEAD') {
    answer.writeHead(302, {Location: PUBLIC + String(request.url || '/'), 'Cache-Control': 'no-store'});
    answer.end();
  } else {
    answer.writeHead(404, {'Content-Type': 'text/plain'});
    answer.end('Not here: the hub is at ' + PUBLIC + '/hub/\n');
  }
}

/* Whether the proxy may go on with the request (false: it has been answered here). */
function guard(event, request, answer) {
  const account = accountOf(request);
  if (account === null || (account !== '' && !onOwnPath(account, request.url))) {
    elsewhere(event, request, answer);
    return false;
  }
  keepOwnCookies(request, account);
  if (SECURE && event === 'request') answer.setHeader('Strict-Transport-Security', HSTS);
  return true;
}

for (const Server of [http.Server, https.Server]) {
  const emit = Server.prototype.emit;
  Server.prototype.emit = function (event, request, answer, ...rest) {
    const guarded = (event === 'request' || event === 'upgrade') && PORT &&
      typeof this.address === 'function' && this.address() && this.address().port === PORT;
    if (guarded) {
      try {
        if (!guard(event, request, answer)) return true;
      } catch (error) { // a request the rules cannot read: refused, never the proxy down
        try {
          if (event === 'upgrade') answer.destroy();
          else { answer.statusCode = 400; answer.end(); }
        } catch (ignored) { /* the connection is gone already */ }
        return true;
      }
    }
    return emit.call(this, event, request, answer, ...rest);
  };
}
