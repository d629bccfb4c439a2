"""JupyterHub for the course on one machine: real Unix accounts, one server per account.

Installed by `bash hub/setup.sh` as root (JupyterHub, its proxy and the course in
/opt/kvlesson-hub, a folder every account can read; this file and its helpers in
/opt/kvlesson-hub/etc), started as root from any folder with the hub's public address:

    KVLESSON_HUB_ADDRESS=https://hub.example.org \
        /opt/kvlesson-hub/venv/bin/jupyterhub -f /opt/kvlesson-hub/etc/jupyterhub_config.py

and stopped with `/opt/kvlesson-hub/venv/bin/python /opt/kvlesson-hub/etc/stop.py`
(hub/stop.py: the hub, its proxy and every student's process). The hub keeps its state (the
database of users, tokens and servers, the cookie secret, the process ids, its TLS
certificate and key) in /srv/jupyterhub, a folder only root may enter. It serves https
itself, on the address's port (443), with the certificate for the hub's name and every name
under it; plain http only for a hub tried on this machine (`http://hub.localhost`, on the
loopback address). Its own two ports are on the loopback address, and all three are below
the ports any account may bind, checked free before it starts (hub/ports.py).

Each account's server is on a name of its own, https://NAME.hub.example.org (JupyterHub's
`subdomain_host`): a page one account serves (any file of its own, which its server may
serve without a login) is then another origin than every other account's server and the
hub, and the browser keeps it from reading or driving them. On one shared origin a
student's page could frame or open the instructor's JupyterLab, read its XSRF token and
type into a terminal as the instructor (docs/jupyterhub.md, "One name per account"; JupyterHub:
"Subdomains are the only way to reliably isolate user servers from each other").

Who is who comes from two Unix groups: the members of `kvlesson-instructors` get nbgrader's
instructor tools (formgrader, Create Assignment) and grade the clone of the course in their
~/kvlesson; the members of `kvlesson-students` get the student interface (Validate and the
Assignment List). Both log in with their Unix password (PAM) and their servers are started
as their own accounts by the local process spawner, so Unix permissions keep each
account's files apart. A student's processes end with her server (hub/processes.py), and the
proxy serves the hub's pages on the hub's own name only and passes each name only its own
cookies (hub/proxy_guard.js). docs/jupyterhub.md says how to set it up;
tests/system/test_hub.py runs it, and runs each attack of the walks against it as a student.
"""

import grp
import importlib.util
import os
import pwd
import shutil
import stat
import sys
from urllib.parse import urlsplit

c = get_config()  # noqa: F821 - provided by JupyterHub

HERE = os.path.dirname(os.path.abspath(__file__))  # PREFIX/etc: this file and its helpers


def beside(name: str):
    """A helper module copied beside this file (hub/setup.sh), loaded by its path."""
    spec = importlib.util.spec_from_file_location(f"kvlesson_hub_{name}", f"{HERE}/{name}.py")
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


places, ports, processes = beside("places"), beside("ports"), beside("processes")
PREFIX, STATE = places.PREFIX, places.STATE
INSTRUCTORS, STUDENTS = places.INSTRUCTORS, places.STUDENTS

# The hub's public address: every account's server on its own name under it (wildcard DNS
# and a certificate for both: docs/jupyterhub.md, step 4).
ADDRESS = os.environ.get("KVLESSON_HUB_ADDRESS", "")
PARTS = urlsplit(ADDRESS)
if PARTS.scheme not in ("https", "http") or not PARTS.hostname or PARTS.path not in ("", "/"):
    raise SystemExit(
        "Start the hub with its public address in KVLESSON_HUB_ADDRESS, e.g. "
        "KVLESSON_HUB_ADDRESS=https://hub.example.org (each account's server is "
        "then at https://NAME.hub.example.org: docs/jupyterhub.md, step 4); got "
        f"{ADDRESS!r}"
    )
NAME = PARTS.hostname.lower()
SECURE = PARTS.scheme == "https"
# A hub tried on this machine: names under localhost reach the loopback address only.
ON_THIS_MACHINE = NAME == "localhost" or NAME.endswith(".localhost")
if not SECURE and not ON_THIS_MACHINE:
    raise SystemExit(
        f"{ADDRESS} is plain http: passwords and cookies would cross the network in the "
        "clear, and any account's page could set the hub's cookies. A real term is "
        "https (docs/jupyterhub.md, step 4); http only for a hub tried on this machine, "
        "at http://hub.localhost"
    )
PORT = PARTS.port or (443 if SECURE else 80)
PUBLIC = f"{PARTS.scheme}://{PARTS.netloc}"

# TLS at the hub's own proxy, with the certificate for HUB and *.HUB in the hub's private
# folder. The hub listens on the address's port, on every address (the loopback address only
# for a hub on this machine), below the unprivileged ports like its own two.
if SECURE:
    for path, what in ((places.TLS_CERT, "certificate"), (places.TLS_KEY, "private key")):
        if not os.path.isfile(path):
            raise SystemExit(
                f"No TLS {what} at {path}: put the {what} for {NAME} and *.{NAME} there "
                "(docs/jupyterhub.md, step 4), then start the hub again"
            )
    c.JupyterHub.ssl_cert, c.JupyterHub.ssl_key = places.TLS_CERT, places.TLS_KEY
LISTEN = "127.0.0.1" if ON_THIS_MACHINE else ""  # "": every address
c.JupyterHub.bind_url = f"{PARTS.scheme}://{LISTEN}:{PORT}"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{places.HUB_API_PORT}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{places.PROXY_API_PORT}"
c.JupyterHub.subdomain_host = PUBLIC
# Over https, cookies locked to the name that set them (JupyterHub's advice with
# subdomains): a student's server cannot set a cookie the hub or another server reads.
c.JupyterHub.cookie_host_prefix_enabled = SECURE


def private_state(folder: str) -> None:
    """Refuse to start unless `folder` is root's and closed to every other account (the
    database holds the user list, cookie ids and hashed tokens); make the database file
    private before SQLite creates it with the umask's 644."""
    info = os.stat(folder)
    if info.st_uid != 0 or stat.S_IMODE(info.st_mode) & 0o077:
        raise SystemExit(
            f"{folder} must be root's and closed to other accounts "
            f"(it is mode {stat.S_IMODE(info.st_mode):o}, owner id {info.st_uid}): "
            f"sudo chown root: {folder} && sudo chmod 700 {folder}"
        )
    database = os.path.join(folder, "jupyterhub.sqlite")
    os.close(os.open(database, os.O_CREAT | os.O_WRONLY, 0o600))
    os.chmod(database, 0o600)


private_state(STATE)
c.JupyterHub.db_url = f"sqlite:///{STATE}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = f"{STATE}/jupyterhub_cookie_secret"
c.JupyterHub.pid_file = places.HUB_PID
c.ConfigurableHTTPProxy.pid_file = places.PROXY_PID

# Before anything binds: no port of the hub's is one any account may take, and nothing holds
# one (a proxy a stopped hub left is ended; anything else is named, and the hub stops here).
PROBLEM = ports.ports_problem(
    {
        "public port": PORT,
        "API port": places.HUB_API_PORT,
        "proxy's API port": places.PROXY_API_PORT,
    },
    places.PROXY_PID,
)
if PROBLEM:
    raise SystemExit(f"The hub does not start: {PROBLEM}")

c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.allowed_groups = {INSTRUCTORS, STUDENTS}

c.JupyterHub.spawner_class = "localprocess"
c.JupyterHub.proxy_class = "configurable-http-proxy"
# The proxy with the course's rules at the front door (hub/proxy_guard.js: the hub's pages on
# its own name only, each name only the cookies it reads), node's header limit raised so that
# a cookie bomb is read and dropped there rather than answered 431, and ended with the hub
# (setpriv --pdeathsig: a start that fails, or a hub killed, leaves no proxy holding a port).
NODE = shutil.which("node") or "/usr/bin/node"
c.ConfigurableHTTPProxy.command = [
    "setpriv",
    "--pdeathsig",
    "TERM",
    "--",
    NODE,
    "--max-http-header-size=1048576",  # bytes: above a browser's cookies for one site
    "--require",
    f"{HERE}/proxy_guard.js",
    f"{PREFIX}/proxy/node_modules/configurable-http-proxy/bin/configurable-http-proxy",
]
os.environ.update(  # what the proxy's guard reads (the proxy inherits the hub's environment)
    KVLESSON_HUB_HOST=NAME, KVLESSON_HUB_PORT=str(PORT), KVLESSON_HUB_PUBLIC=PUBLIC
)
# Each server runs this environment's singleuser command as its user (sys.prefix is the
# venv the hub runs from, /opt/kvlesson-hub/venv).
c.Spawner.cmd = [os.path.join(sys.prefix, "bin", "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"


def in_group(username: str, group: str) -> bool:
    """Whether the Unix account `username` belongs to `group`, as its main or an extra group."""
    try:
        account = pwd.getpwnam(username)
        gid = grp.getgrnam(group).gr_gid
    except KeyError:
        return False
    return gid in os.getgrouplist(username, account.pw_gid)


def server_environment(spawner) -> None:
    """What each server gets on top of JupyterHub's: this environment's commands first on
    its PATH (nbgrader runs `alembic` to open the gradebook, and a terminal should find
    `nbgrader`; root's PATH may point into folders the user cannot read), and the Jupyter
    configuration of its role, from PREFIX/etc (hub/setup.sh): the instructors' folder
    (formgrader, the course in ~/kvlesson) or the students' (instructor tools off and
    locked); both also read the course id and the exchange from `everyone`."""
    role = "instructor" if in_group(spawner.user.name, INSTRUCTORS) else "student"
    folders = [f"{PREFIX}/etc/{role}", f"{PREFIX}/etc/everyone"]
    commands = [os.path.join(sys.prefix, "bin"), "/usr/local/bin", "/usr/bin", "/bin"]
    # A new dict: the one from the configuration is shared by every spawner.
    spawner.environment = {
        **spawner.environment,
        "PATH": os.pathsep.join(commands),
        "JUPYTER_CONFIG_PATH": os.pathsep.join(folders),
    }


c.Spawner.pre_spawn_hook = server_environment


def end_her_processes(spawner) -> None:
    """When a student's server stops (or the hub, which stops every server), every process
    of her account ends with it: one started with `setsid nohup` from her terminal left the
    server's session and outlived the hub (hub/processes.py). An instructor's are theirs."""
    name = spawner.user.name
    if in_group(name, STUDENTS) and not in_group(name, INSTRUCTORS):
        processes.end_account(name)


c.Spawner.post_stop_hook = end_her_processes
