"""A class on a real JupyterHub, for tests/system/test_hub.py: the guide's commands, the
accounts they make, the hub they start, each account's own token, requests to its own server
(on its own name, NAME.hub.localhost), commands in its own terminal, and what an account may
do with a file or folder.

Everything a run makes it also removes: `Class.remove` deletes the accounts (with their homes)
and the groups that were not there before, `Hub.stop` stops the servers, the hub and the
proxy, and ends by process id whatever still runs under one of the class's accounts.
"""

from __future__ import annotations

import http.client
import importlib.util
import json
import os
import pwd
import re
import secrets
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import websocket  # websocket-client, a dependency of jupyter_server

from support.patience import HANG

PREFIX = Path("/opt/kvlesson-hub")  # hub/setup.sh and hub/jupyterhub_config.py
STATE = Path("/srv/jupyterhub")  # the hub's own files (hub/jupyterhub_config.py)
INSTRUCTORS = "kvlesson-instructors"  # the groups of hub/jupyterhub_config.py
STUDENTS = "kvlesson-students"
BIND = ("127.0.0.1", 443)  # hub/jupyterhub_config.py: a name under localhost, loopback only
# The hub's public address in the test, for the guide's https://HUB: every account's server is
# at NAME.hub.localhost, a name Chromium takes to this machine (glibc does not: requests
# from Python are sent to BIND with the name in their Host header and in TLS's SNI).
# hub.localhost, not localhost: alice.hub.localhost and teacher.hub.localhost are then one
# site, as alice.hub.example.org and teacher.hub.example.org are (the browser sends cookies
# between them), so the test's browser is as strict as a real hub's and no stricter.
HUB_URL = "https://hub.localhost"
HUB_PORTS = (443, 801, 881)  # the hub, its proxy's API, the hub's API (hub/places.py)
CERTIFIED = ("hub.localhost", "*.hub.localhost")  # the names of the test's certificate
TRUST: dict[str, ssl.SSLContext] = {}  # "context": trusting the test's authority only
# colours, a window title, a character set
ESCAPES = re.compile(r"\x1b(\[[0-9;?]*[A-Za-z]|\][^\x07]*\x07|\([A-Z0-9])")
WAIT = 60  # seconds for the hub or a server to come up, a hang guard only


class _Loopback(http.client.HTTPSConnection):
    """A TLS connection to the hub's bound address, whatever name the URL gives: the request
    keeps the URL's name in its Host header, which the hub's proxy routes by, and in TLS's
    server name, which the certificate must hold (checked against the test's authority)."""

    def connect(self) -> None:
        plain = socket.create_connection(BIND, self.timeout)
        self.sock = trusted().wrap_socket(plain, server_hostname=self.host)


class _LoopbackHandler(urllib.request.HTTPSHandler):
    def https_open(self, req):
        return self.do_open(_Loopback, req)


def opener(*handlers) -> urllib.request.OpenerDirector:
    """A urllib opener whose https:// requests all go to the hub's bound address."""
    return urllib.request.build_opener(_LoopbackHandler, *handlers)


def trusted() -> ssl.SSLContext:
    """TLS that trusts the test's certificate authority, and nothing else."""
    return TRUST["context"]


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A certificate authority of the test's own, and a certificate it signs for the hub's
    name and every name under it (the guide's wildcard certificate); the certificate with
    its chain and its key. Requests of the test trust that authority only."""
    ca_key, ca, key, request, cert, chain = (
        folder / name for name in ("ca.key", "ca.crt", "hub.key", "hub.csr", "hub.crt", "chain.crt")
    )
    run(
        "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        "-keyout", str(ca_key), "-out", str(ca), "-subj", "/CN=kvlesson hub test authority",
    )  # fmt: skip
    run(
        "openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
        "-out", str(request), "-subj", f"/CN={CERTIFIED[0]}",
    )  # fmt: skip
    extensions = folder / "names.ext"
    extensions.write_text(
        "subjectAltName=" + ",".join(f"DNS:{name}" for name in CERTIFIED) + "\n"
        "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
    )
    run(
        "openssl", "x509", "-req", "-in", str(request), "-CA", str(ca), "-CAkey", str(ca_key),
        "-CAcreateserial", "-days", "2", "-out", str(cert), "-extfile", str(extensions),
    )  # fmt: skip
    chain.write_text(cert.read_text() + ca.read_text())
    TRUST["context"] = ssl.create_default_context(cafile=str(ca))
    return chain, key


def hub_module(name: str):
    """A module of the repository's hub/ (the hub's helpers are not a package: hub/setup.sh
    copies them beside the hub's configuration, which loads them by their path)."""
    path = Path(__file__).resolve().parents[2] / "hub" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"kvlesson_hub_{name}", path)
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def origin_of(hub_url: str, name: str) -> str:
    """The origin of the account `name`'s server: NAME under the hub's address (JupyterHub's
    'idna' subdomain hook leaves a lower-case ASCII name as it is)."""
    parts = urllib.parse.urlsplit(hub_url)
    return f"{parts.scheme}://{name}.{parts.netloc}"


def listening(port: int) -> list[str]:
    """The local addresses that listen on TCP `port` (IPv4 and IPv6), from /proc."""
    found = []
    for table, size in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, _, hexport = local.partition(":")
            if state == "0A" and int(hexport, 16) == port:  # 0A: LISTEN
                found.append(_address(address, size))
    return found


def _address(hexed: str, size: int) -> str:
    if size == 8:
        return socket.inet_ntop(socket.AF_INET, bytes.fromhex(hexed)[::-1])
    words = [bytes.fromhex(hexed[i : i + 8])[::-1] for i in range(0, 32, 8)]
    return socket.inet_ntop(socket.AF_INET6, b"".join(words))


def run(*command: str, **kwargs) -> subprocess.CompletedProcess:
    """Run an administration command as root; fail with its output if it fails."""
    done = subprocess.run(command, capture_output=True, text=True, check=False, **kwargs)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr}")
    return done


def account_pids(names: set[str]) -> list[int]:
    """The process ids of every process that runs as one of the accounts `names`."""
    uids = set()
    for name in names:
        try:
            uids.add(pwd.getpwnam(name).pw_uid)
        except KeyError:
            continue
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid in uids:
                    pids.append(int(entry.name))
            except FileNotFoundError:
                continue
    return pids


def end_processes(pids: list[int]) -> None:
    """Stop these processes: SIGTERM, two seconds, then SIGKILL."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
            time.sleep(0.1)


@dataclass
class Class:
    """The Unix accounts of a class, as the guide's commands make them: one instructor and the
    students, each with a password, in the two groups the hub's configuration reads; and
    accounts outside the course that the test makes itself (no password, in neither group)."""

    instructor: str
    students: list[str]
    outsiders: list[str] = field(default_factory=list)
    passwords: dict[str, str] = field(default_factory=dict)
    groups_before: set[str] = field(default_factory=set)

    @property
    def names(self) -> list[str]:
        return [self.instructor, *self.students]

    def home(self, name: str) -> Path:
        return Path(pwd.getpwnam(name).pw_dir)

    def prepare(self) -> str:
        """Remove what an earlier run left (killed before it could clean up), note which
        groups exist already, and make a password for each account; the lines of the
        guide's passwords.txt."""
        self.remove()
        self.groups_before = {g for g in (INSTRUCTORS, STUDENTS) if _group_exists(g)}
        self.passwords = {name: secrets.token_urlsafe(12) for name in self.names}
        return "".join(f"{name}:{password}\n" for name, password in self.passwords.items())

    def make_outsiders(self) -> None:
        """The accounts outside the course, as Debian's `useradd` makes any account, each with
        a password of its own."""
        for name in self.outsiders:
            run("useradd", "--create-home", name)
            self.passwords[name] = secrets.token_urlsafe(12)
            run("chpasswd", input=f"{name}:{self.passwords[name]}\n")

    def remove(self) -> None:
        """Delete the accounts, their homes and the groups that were not there before."""
        end_processes(account_pids({*self.names, *self.outsiders}))
        for name in [*self.names, *self.outsiders]:
            subprocess.run(["userdel", "--remove", name], capture_output=True)
        for group in {INSTRUCTORS, STUDENTS} - self.groups_before:
            subprocess.run(["groupdel", group], capture_output=True)


def _group_exists(group: str) -> bool:
    return subprocess.run(["getent", "group", group], capture_output=True).returncode == 0


def as_account(name: str, command: str, timeout: float = 60) -> tuple[int, str]:
    """Run a shell command as the account `name` (with its groups, as a login gives them);
    its exit status and output."""
    done = subprocess.run(
        ["runuser", "-u", name, "--", "sh", "-c", command],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return done.returncode, (done.stdout + done.stderr).strip()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Stop at a redirect: after logging in the hub would send the browser on to start
    the server."""

    def redirect_request(self, *args, **kwargs):
        return None


def answer_at(url: str, token: str = "") -> tuple[int, str, bytes]:
    """One GET of `url` (with `token`, if any), redirects not followed: its status, where it
    redirects to ("" if nowhere) and its body."""
    headers = {"Authorization": f"token {token}"} if token else {}
    try:
        with opener(_NoRedirect()).open(
            urllib.request.Request(url, headers=headers), timeout=HANG
        ) as answer:
            return answer.status, "", answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Location", ""), error.read()


class HubError(AssertionError):
    """A request to the hub or a server did not answer as it should."""


@dataclass
class Hub:
    """The hub as the guide's start command runs it (as root, its state in /srv/jupyterhub,
    on the loopback address), its output in `log_path`."""

    log_path: Path
    url: str = HUB_URL
    process: subprocess.Popen | None = None

    def start(self, command: str, cwd: Path) -> None:
        """Run the guide's start command in the background as root (its own session, as an
        admin's terminal would hold it) and wait until the hub answers."""
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen(
                ["bash", "-c", command],
                cwd=cwd,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise HubError(f"the hub exited {self.process.returncode}:\n{self.log()}")
            try:
                opener().open(f"{self.url}/hub/api/", timeout=2)
                return
            except OSError:
                time.sleep(0.3)
        raise HubError(f"the hub did not answer in {WAIT} s:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-6000:]

    def wait_stopped(self, seconds: float = 30) -> bool:
        """Whether the hub's process has ended within `seconds`."""
        try:
            self.process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return False
        return True

    def stop(self, names: list[str]) -> None:
        """Make sure nothing of the hub runs any more: the hub (it stops the servers it
        spawned and its proxy), then whatever still runs in the hub's session, as its proxy,
        or as one of the accounts `names`."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            if not self.wait_stopped(20):
                self.process.kill()
                self.process.wait()
        if self.process is not None:
            session = [
                int(p.name)
                for p in Path("/proc").iterdir()
                if p.name.isdigit() and _session_of(int(p.name)) == self.process.pid
            ]
            end_processes(session)
        proxy = STATE / "jupyterhub-proxy.pid"  # where the hub records its proxy
        if proxy.exists() and _is_proxy(int(proxy.read_text())):
            end_processes([int(proxy.read_text())])
        end_processes(account_pids(set(names)))


def _is_proxy(pid: int) -> bool:
    try:
        return b"configurable-http-proxy" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _session_of(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except OSError:
        return None


@dataclass
class User:
    """One account on the hub, acting with its own API token, made from its password."""

    hub: Hub
    name: str
    password: str
    token: str = ""

    def log_in(self) -> None:
        """Log in on the hub's login form (the hub knows an account from its first login),
        then get a token of this account's own; the hub checks the password with PAM."""
        jar = urllib.request.HTTPCookieProcessor()
        browser = opener(jar, _NoRedirect())
        form = browser.open(f"{self.hub.url}/hub/login", timeout=HANG).read().decode()
        xsrf = re.search(r'name="_xsrf" value="([^"]+)"', form).group(1)
        fields = {"username": self.name, "password": self.password, "_xsrf": xsrf}
        try:
            browser.open(
                f"{self.hub.url}/hub/login?next=",
                timeout=HANG,
                data=urllib.parse.urlencode(fields).encode(),
            )
        except urllib.error.HTTPError as error:  # the redirect after a good login
            if error.code != 302:
                raise HubError(f"{self.name} could not log in: {error.code}") from error
        body = {
            "auth": {"username": self.name, "password": self.password},
            "note": "kvlesson hub test",
        }
        self.token = self.call("POST", f"/hub/api/users/{self.name}/tokens", body, auth=False)[
            "token"
        ]

    @property
    def origin(self) -> str:
        """Where this account's server answers: its own name under the hub's."""
        return origin_of(self.hub.url, self.name)

    def call(
        self,
        method: str,
        path: str,
        body: object = None,
        form: dict | None = None,
        auth: bool = True,
        raw: bool = False,
        origin: str | None = None,
    ):
        """One request to the hub (`path` from the hub's root), or to `origin` (an account's
        server), with this account's token; the JSON answer (or the bytes and headers,
        `raw`)."""
        headers = {"Authorization": f"token {self.token}"} if auth else {}
        data = None
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(
            (origin or self.hub.url) + path, data=data, method=method, headers=headers
        )
        try:
            with opener().open(request, timeout=HANG) as answer:
                content = answer.read()
                if raw:
                    return answer.status, answer.headers, content
        except urllib.error.HTTPError as error:
            if raw:
                return error.code, error.headers, error.read()
            raise HubError(
                f"{self.name}: {method} {path} -> {error.code}: {error.read()[:2000]!r}"
            ) from error
        return json.loads(content) if content.strip() else None

    def server(self, method: str, path: str, **kwargs):
        """A request to this account's own server, through the hub's proxy, at its name."""
        return self.call(
            method, f"/user/{self.name}/{path.lstrip('/')}", origin=self.origin, **kwargs
        )

    def spawn(self) -> None:
        """Ask the hub to start this account's server."""
        self.call("POST", f"/hub/api/users/{self.name}/server")

    def wait_ready(self) -> None:
        """Wait until the hub reports this account's server ready."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            model = self.call("GET", f"/hub/api/users/{self.name}")
            if model["servers"].get("", {}).get("ready"):
                return
            time.sleep(0.5)
        raise HubError(f"{self.name}'s server was not ready in {WAIT} s:\n{self.hub.log()}")

    def shell(self, command: str) -> tuple[int, str]:
        """Run `command` in a new terminal of this account's server (what a person types in
        JupyterLab's Terminal; it starts in the home folder); its exit status and output."""
        terminal = self.server("POST", "/api/terminals", body={})["name"]
        host = urllib.parse.urlsplit(self.origin).netloc
        url = f"wss://{BIND[0]}:{BIND[1]}/user/{self.name}/terminals/websocket/{terminal}"
        marker = secrets.token_hex(6)
        connection = websocket.create_connection(
            url,
            header=[f"Authorization: token {self.token}"],
            host=host,
            origin=self.origin,
            timeout=HANG,
            sslopt={"context": trusted(), "server_hostname": host},
        )
        try:
            # printf joins the marker and the status: the echoed command line never holds both.
            connection.send(json.dumps(["stdin", f"{command}; printf '%s=%s\\n' {marker} $?\r"]))
            output = ""
            while f"{marker}=" not in output.replace("\r", ""):
                kind, *text = json.loads(connection.recv())
                if kind == "stdout":
                    output += text[0]
        finally:
            connection.close()
            self.server("DELETE", f"/api/terminals/{terminal}")
        output = ESCAPES.sub("", output.replace("\r", ""))
        before, _, after = output.rpartition(f"{marker}=")
        # What the command printed starts after the terminal's echo of the command line.
        printed = before.split(f"{marker} $?\n", 1)[-1]
        return int(after.split()[0]), printed
