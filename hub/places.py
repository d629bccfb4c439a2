"""Where the course's hub lives and who its accounts are: the one list the hub's
configuration (hub/jupyterhub_config.py) and its stop command (hub/stop.py) share.

hub/setup.sh copies this file beside them (PREFIX/etc); change PREFIX here and in setup.sh
together.
"""

PREFIX = "/opt/kvlesson-hub"  # where hub/setup.sh installs
STATE = "/srv/jupyterhub"  # the hub's own files: root only (hub/setup.sh makes it, mode 700)
INSTRUCTORS = "kvlesson-instructors"  # Unix group of the instructors
STUDENTS = "kvlesson-students"  # Unix group of the students
HUB_PID = f"{STATE}/jupyterhub.pid"
PROXY_PID = f"{STATE}/jupyterhub-proxy.pid"
TLS_CERT = f"{STATE}/tls.crt"  # the certificate for HUB and *.HUB (docs/jupyterhub.md, step 4)
TLS_KEY = f"{STATE}/tls.key"
# The hub's own ports on the loopback address, below the machine's unprivileged start
# (1024 by Linux's default) so that no student's process can bind them first; JupyterHub's
# defaults, 8081 and 8001, are any account's. The public port is the address's (443).
HUB_API_PORT = 881
PROXY_API_PORT = 801
