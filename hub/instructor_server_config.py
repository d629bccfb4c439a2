"""Jupyter server configuration of an instructor's server on the course's hub.

The formgrader is drawn in an iframe inside JupyterLab, and since JupyterHub 4.1 every
single-user server forbids being framed (`frame-ancestors 'none'`), so the panel stays
empty. An instructor's server allows its own pages to frame it again: `'self'` is the
instructor's own origin, because the hub gives each account's server a name of its own
(hub/jupyterhub_config.py, `subdomain_host`), so no page another account serves may frame
it. (On one shared origin `'self'` would let any student's page frame the instructor's
JupyterLab and act as the instructor: never set it there.) Set for the instructors' group
only (hub/jupyterhub_config.py).
"""

c = get_config()  # noqa: F821 - provided by jupyter_server

c.ServerApp.tornado_settings = {"headers": {"Content-Security-Policy": "frame-ancestors 'self'"}}
