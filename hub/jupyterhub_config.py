"""JupyterHub for the course on one machine: real Unix accounts, one server per account.

Installed by `bash hub/setup.sh` as root (JupyterHub, its proxy and the course in
/opt/kvlesson-hub, a folder every account can read; this file in /opt/kvlesson-hub/etc),
started as root from any folder with the hub's public address:

    KVLESSON_HUB_ADDRESS=https://hub.example.org \
        /opt/kvlesson-hub/venv/bin/jupyterhub -f /opt/kvlesson-hub/etc/jupyterhub_config.py

and stopped with `kill $(cat /srv/jupyterhub/jupyterhub.pid)`. The hub keeps its state (the
database of users, tokens and servers, the cookie secret, the process ids) in
/srv/jupyterhub, a folder only root may enter, and listens on the loopback address only:
students reach it through a TLS proxy in front of it (docs/jupyterhub.md).

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
account's files apart. docs/jupyterhub.md says how to set it up; tests/system/test_hub.py runs it.
"""

import grp
import os
import pwd
import stat
import sys

c = get_config()  # noqa: F821 - provided by JupyterHub

PREFIX = "/opt/kvlesson-hub"  # where hub/setup.sh installs; change both together
INSTRUCTORS = "kvlesson-instructors"  # Unix group of the instructors
STUDENTS = "kvlesson-students"  # Unix group of the students
STATE = "/srv/jupyterhub"  # the hub's own files: root only (hub/setup.sh makes it, mode 700)

# The loopback address only: nothing reaches the hub, and no password crosses the network
# in the clear, except through the TLS proxy in front of it (docs/jupyterhub.md). Its other
# ports (the hub's API, 8081, and the proxy's, 8001) are on loopback by JupyterHub's default.
c.JupyterHub.bind_url = "http://127.0.0.1:8000"

# Every account's server on its own name under the hub's public address (wildcard DNS and,
# for https, a wildcard certificate: docs/jupyterhub.md, step 4).
ADDRESS = os.environ.get("KVLESSON_HUB_ADDRESS", "")
if not ADDRESS.startswith(("https://", "http://")):
    raise SystemExit(
        "Start the hub with its public address in KVLESSON_HUB_ADDRESS, e.g. "
        "KVLESSON_HUB_ADDRESS=https://hub.example.org (each account's server is "
        "then at https://NAME.hub.example.org: docs/jupyterhub.md, step 4); got "
        f"{ADDRESS!r}"
    )
c.JupyterHub.subdomain_host = ADDRESS
# Over https, cookies locked to the name that set them (JupyterHub's advice with
# subdomains): a student's server cannot set a cookie the hub or another server reads.
c.JupyterHub.cookie_host_prefix_enabled = ADDRESS.startswith("https://")


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
c.JupyterHub.pid_file = f"{STATE}/jupyterhub.pid"
c.ConfigurableHTTPProxy.pid_file = f"{STATE}/jupyterhub-proxy.pid"

c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.allowed_groups = {INSTRUCTORS, STUDENTS}

c.JupyterHub.spawner_class = "localprocess"
c.JupyterHub.proxy_class = "configurable-http-proxy"
c.ConfigurableHTTPProxy.command = [f"{PREFIX}/proxy/node_modules/.bin/configurable-http-proxy"]
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
