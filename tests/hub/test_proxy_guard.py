"""The rules at the hub's front door (hub/proxy_guard.js), in node as the hub's proxy loads
them, in front of a server that answers with what reached it: the hub's pages on the hub's
name only, each name only the cookies it reads, a cookie bomb read and dropped (never 431),
Strict-Transport-Security over https, and a second server of the same process (the proxy's
API) left alone. The same rules on a real hub, as a student's attacks, are in
tests/system/test_hub.py."""

from __future__ import annotations

import http.client
import json
import shutil
import socket
import subprocess

import pytest

from support.paths import ROOT
from support.patience import HANG

pytestmark = pytest.mark.process
GUARD = ROOT / "hub" / "proxy_guard.js"
HEADER_LIMIT = "--max-http-header-size=1048576"  # as hub/jupyterhub_config.py starts node
ECHO = r"""
const http = require('http');
const answer = (req, res) => res.end(JSON.stringify({url: req.url, cookie: req.headers.cookie || ''}));
const ports = process.argv.slice(2).map(Number);
let ready = 0;
const upgraded = (req, socket) => socket.end('HTTP/1.1 418 Upgraded\r\nContent-Length: 0\r\n\r\n');
for (const port of ports)
  http.createServer(answer).on('upgrade', upgraded)
    .listen(port, '127.0.0.1', () => { if (++ready === ports.length) console.log('ready'); });
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(params=["https", "http"])
def proxy(request, tmp_path):
    """node with the guard, in front of an echo server on the guarded (public) port and one
    on another port (the proxy's API); the scheme, the two ports."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("no `node` on this machine: the hub's proxy runs in it (hub/setup.sh)")
    public, api = free_port(), free_port()
    (tmp_path / "echo.js").write_text(ECHO)
    address = f"{request.param}://hub.localhost"
    env = {
        "KVLESSON_HUB_HOST": "hub.localhost",
        "KVLESSON_HUB_PORT": str(public),
        "KVLESSON_HUB_PUBLIC": address,
    }
    process = subprocess.Popen(
        [
            node,
            HEADER_LIMIT,
            "--require",
            str(GUARD),
            str(tmp_path / "echo.js"),
            str(public),
            str(api),
        ],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout.readline().strip() == "ready"
        yield request.param, public, api
    finally:
        process.kill()
        process.wait()


def ask(
    port: int, host: str, path: str, method: str = "GET", cookie: str = "", upgrade: bool = False
):
    """One request; its status, headers and what the server behind saw (None if answered by
    the guard)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=HANG)
    headers = {"Host": host, **({"Cookie": cookie} if cookie else {})}
    if upgrade:
        headers.update(Connection="Upgrade", Upgrade="websocket")
    connection.request(method, path, headers=headers)
    answer = connection.getresponse()
    body = answer.read()
    connection.close()
    try:
        seen = json.loads(body)
    except ValueError:
        seen = None
    return answer.status, dict(answer.getheaders()), seen


def test_the_hubs_pages_answer_on_the_hubs_name_only(proxy):
    scheme, port, _ = proxy
    status, _, seen = ask(port, "hub.localhost", "/hub/login")
    assert (status, seen["url"]) == (200, "/hub/login")
    status, _, seen = ask(port, "alice.hub.localhost", "/user/alice/lab?x=1")
    assert (status, seen["url"]) == (200, "/user/alice/lab?x=1")
    status, _, _ = ask(
        port, "alice.hub.localhost", "/user/alice/terminals/websocket/1", upgrade=True
    )
    assert status == 418  # her own server's websocket reaches it
    for host, path in (
        ("alice.hub.localhost", "/hub/login"),
        ("alice.hub.localhost", "/user/bob/lab"),
        ("alice.hub.localhost", "/user/alicex/lab"),
        ("alice.hub.localhost", "/"),
        ("evil.example", "/hub/login"),
        ("a.b.hub.localhost", "/user/a.b/"),
        ("", "/hub/login"),
    ):
        status, headers, seen = ask(port, host, path)
        assert (status, headers.get("Location"), seen) == (
            302,
            f"{scheme}://hub.localhost{path}",
            None,
        )
        status, _, seen = ask(port, host, path, method="POST")
        assert (status, seen) == (404, None), (host, path)
        status, _, seen = ask(port, host, path, upgrade=True)
        assert status == 404 and seen is None, (host, path)


def test_each_name_gets_only_the_cookies_it_reads(proxy):
    scheme, port, _ = proxy
    bomb = "; ".join(f"bomb{i}={'x' * 3800}" for i in range(30))
    states = "; ".join(f"jupyterhub-user-alice-oauth-state-{i}=s{i}" for i in range(10))
    cookies = (
        f"{bomb}; _xsrf=first; _xsrf=second; jupyterhub-session-id=s; "
        + "; ".join(f"_xsrf=more{i}" for i in range(30))
        + "; "
        "__Host-jupyterhub-hub-login=hub; jupyterhub-hub-login=tossed; "
        f"__Host-jupyterhub-user-alice=alice; jupyterhub-user-alice=plain; {states}"
    )
    status, _, hub = ask(port, "hub.localhost", "/hub/home", cookie=cookies)
    assert status == 200  # never 431, though the header is 115 KB
    status, _, alice = ask(port, "alice.hub.localhost", "/user/alice/lab", cookie=cookies)
    assert status == 200
    # JupyterHub's shared names: a few of each, in order (JupyterHub takes the first it signed)
    shared = [
        "_xsrf=first",
        "_xsrf=second",
        "jupyterhub-session-id=s",
        "_xsrf=more0",
        "_xsrf=more1",
    ]
    if scheme == "https":  # only what that very name may set, and the two shared ones
        assert hub["cookie"].split("; ") == shared + [
            "__Host-jupyterhub-hub-login=hub",
            "__Host-jupyterhub-user-alice=alice",
        ]
        assert alice["cookie"] == hub["cookie"]
    else:  # no __Host- over http: the names the destination reads, a few OAuth states
        assert hub["cookie"].split("; ") == shared + ["jupyterhub-hub-login=tossed"]
        kept = alice["cookie"].split("; ")
        assert kept[:6] == shared + ["jupyterhub-user-alice=plain"]
        assert len(kept) == 6 + 4 and all("oauth-state" in c for c in kept[6:])


def test_over_https_browsers_are_told_to_stay_on_https(proxy):
    scheme, port, _ = proxy
    _, headers, _ = ask(port, "hub.localhost", "/hub/login")
    assert (headers.get("Strict-Transport-Security") is not None) == (scheme == "https")


def test_the_proxys_api_port_is_not_guarded_and_a_garbled_request_downs_nothing(proxy):
    _, port, api = proxy
    status, _, seen = ask(api, "127.0.0.1:8001", "/api/routes")
    assert (status, seen["url"]) == (200, "/api/routes")
    with socket.create_connection(("127.0.0.1", port), timeout=HANG) as raw:
        raw.sendall(b"GET /hub/login HTTP/1.1\r\nHost: \xff\xfe..\r\nCookie: \xff=\xfe\r\n\r\n")
        raw.recv(1024)
    status, _, _ = ask(port, "hub.localhost", "/hub/login")
    assert status == 200  # the proxy still answers
