"""JupyterHub for the course on one machine: real Unix accounts, one server per account.

Installed by `sudo bash hub/setup.sh` (JupyterHub, its proxy and the course in
/opt/kvlesson-hub, a folder every account can read), started as root:

    sudo /opt/kvlesson-hub/venv/bin/jupyterhub -f hub/jupyterhub_config.py

Who is who comes from two Unix groups: the members of `kvlesson-instructors` get nbgrader's
instructor tools (formgrader, Create Assignment) and grade the clone of the course in their
~/kvlesson; the members of `kvlesson-students` get the student interface (Validate and the
Assignment List). Both log in with their Unix password (PAM) and their servers are started
as their own accounts by the local process spawner, so Unix permissions keep each
account's files apart. docs/jupyterhub.md says how to set it up; tests/test_hub.py runs it.
"""

import grp
import os
import pwd
import sys

c = get_config()  # noqa: F821 - provided by JupyterHub

PREFIX = "/opt/kvlesson-hub"  # where hub/setup.sh installs; change both together
INSTRUCTORS = "kvlesson-instructors"  # Unix group of the instructors
STUDENTS = "kvlesson-students"  # Unix group of the students

# Listen on every address of this machine, port 8000 (JupyterHub's default); put TLS in
# front of it (a reverse proxy, or c.JupyterHub.ssl_cert and ssl_key) before students log in.
c.JupyterHub.bind_url = "http://:8000"

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
    spawner.environment = {**spawner.environment, "PATH": os.pathsep.join(commands),
                           "JUPYTER_CONFIG_PATH": os.pathsep.join(folders)}


c.Spawner.pre_spawn_hook = server_environment
