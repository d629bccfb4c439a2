"""Jupyter server configuration of every server on the course's hub (hub/setup.sh copies it
to PREFIX/etc/everyone).

JupyterLab's terminal starts a login shell by default, and a login shell reads /etc/profile,
which sets PATH again without the hub's environment: `kvlesson grade` and
`nbgrader` would not be found (Debian has no `python` at all). A plain interactive bash
keeps the PATH the hub gave the server (hub/jupyterhub_config.py).
"""

c = get_config()  # noqa: F821 - provided by jupyter_server

c.ServerApp.terminado_settings = {"shell_command": ["/bin/bash"]}
