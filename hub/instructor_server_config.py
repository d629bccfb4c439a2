"""Jupyter server configuration of an instructor's server on the course's hub.

The formgrader is drawn in an iframe inside JupyterLab, and since JupyterHub 4.1 every
single-user server forbids being framed (`frame-ancestors 'none'`), so the panel stays
empty. An instructor's server allows its own pages to frame it again. Without subdomains
all servers share one origin, so this opens the hole JupyterHub 4.1 closed for these
accounts: it is set for the instructors' group only (hub/jupyterhub_config.py), never for
students (docs/jupyterhub.md, "The formgrader").
"""

c = get_config()  # noqa: F821 - provided by jupyter_server

c.ServerApp.tornado_settings = {"headers": {"Content-Security-Policy": "frame-ancestors 'self'"}}
