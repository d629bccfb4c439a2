#!/usr/bin/env bash
# Install the course's single-machine JupyterHub (run as root: `sudo -i` first if you use
# sudo; a fresh Debian has none):
#
#   bash hub/setup.sh
#
# What it makes in /opt/kvlesson-hub, a folder every account can read (a hub started as root runs
# each user's server as that user, so the user must be able to run this Python):
#
#   PREFIX/venv        a virtual environment from Debian's /usr/bin/python3 with
#                      JupyterHub and the course at the versions of the shared lock,
#                      constraints.txt (kvlesson installed as a package, not
#                      editable, so solutions/ stays out of it)
#   PREFIX/proxy       configurable-http-proxy, JupyterHub's proxy, from npm
#   PREFIX/etc/...     the hub's configuration (jupyterhub_config.py, with its helpers:
#                      the ports, the students' processes, the proxy's guard, the stop
#                      command stop.py) and the Jupyter configuration it hands each
#                      account, copied from hub/
#
# and /srv/jupyterhub, the hub's own state (its database, cookie secret and process ids),
# a folder only root may enter. It installs what the guide's steps need with apt when it is
# missing: python3-venv, nodejs and npm (the proxy), bubblewrap (the grading box, which
# instructors run from their servers: it checks that an ordinary account may use it), acl
# (the exchange's inbound, open to the students' group only) and git (the instructor clones
# the course). It says what it does as it goes; pip and npm print what they fetch.
#
# Re-running it is quick: packages are reinstalled only when the lock or the
# package's source changed; the configuration is copied every time.
set -euo pipefail
cd "$(dirname "$0")/.."

PREFIX=/opt/kvlesson-hub      # also in hub/jupyterhub_config.py
JUPYTERHUB_VERSION=6.1.1        # PyPI, November 2026 (scripts/lock.sh locks its dependencies)
PROXY_VERSION=5.3.0             # npm configurable-http-proxy, November 2026
VENV="$PREFIX/venv"
if [ "$(id -u)" != 0 ]; then
    echo "hub/setup.sh installs into $PREFIX for every account: run it as root" >&2
    exit 1
fi
say() { echo "hub/setup.sh: $*"; }
# Debian's packages the guide's steps need, each named by a command it provides.
missing=()
/usr/bin/python3 -c "import venv, ensurepip" 2>/dev/null || missing+=(python3-venv)
command -v npm >/dev/null && command -v node >/dev/null || missing+=(nodejs npm)
command -v bwrap >/dev/null || missing+=(bubblewrap)
command -v setfacl >/dev/null || missing+=(acl)
command -v git >/dev/null || missing+=(git)
command -v setpriv >/dev/null || missing+=(util-linux)  # the hub ends students' processes
if [ ${#missing[@]} -gt 0 ]; then
    say "installing Debian's ${missing[*]} with apt-get"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi
# The grading box runs as the instructor, an ordinary account: bubblewrap then needs
# unprivileged user namespaces (Debian's default; some kernels and containers turn them off).
if ! runuser -u nobody -- bwrap --ro-bind / / --unshare-all true 2>/dev/null; then
    say "WARNING: bubblewrap cannot make its box as an ordinary account here, so instructors" \
        "cannot grade on this machine: allow unprivileged user namespaces" \
        "(sysctl kernel.unprivileged_userns_clone=1 on older Debian kernels," \
        "user.max_user_namespaces above 0; in a container, one that allows them)" >&2
fi

umask 022
mkdir -p "$PREFIX"
# The packages' stamp: this script, the lock, and the package's source.
stamp="$( { echo "$JUPYTERHUB_VERSION $PROXY_VERSION"; cat hub/setup.sh constraints.txt pyproject.toml;
            find kvlesson -name '*.py' | sort | xargs cat; } | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$PREFIX/packages.stamp" 2>/dev/null)" != "$stamp" ]; then
    [ -x "$VENV/bin/python" ] || /usr/bin/python3 -m venv "$VENV"
    # The package alone, outside the checkout, so that pip's build leaves no files here.
    package="$(mktemp -d)"
    trap 'rm -rf "$package"' EXIT
    cp -r pyproject.toml README.md kvlesson "$package/"
    # JupyterHub and the course with its `course` extra, every package at the lock's
    # version; then the package itself again, so that a changed source replaces an
    # installed copy of the same version.
    say "installing JupyterHub $JUPYTERHUB_VERSION and the course into $VENV with pip" \
        "(a few minutes the first time)"
    "$VENV/bin/python" -m pip install --disable-pip-version-check --progress-bar off \
        -c constraints.txt "jupyterhub==$JUPYTERHUB_VERSION" "$package[course]"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
        --force-reinstall "$package"
    # Each server and nbgrader command starts 1.4 s sooner without jsonschema's unused
    # IRI check (see scripts/test.sh).
    "$VENV/bin/python" -m pip uninstall -q -y rfc3987-syntax 2>/dev/null || true
    say "installing configurable-http-proxy $PROXY_VERSION from npm into $PREFIX/proxy"
    npm install --no-audit --no-fund --loglevel=http --fetch-timeout=60000 --fetch-retries=2 \
        --prefix "$PREFIX/proxy" "configurable-http-proxy@$PROXY_VERSION"
    echo "$stamp" > "$PREFIX/packages.stamp"
fi

# The configuration the hub hands out (hub/jupyterhub_config.py names these folders).
rm -rf "$PREFIX/etc"
mkdir -p "$PREFIX/etc/everyone" "$PREFIX/etc/instructor" "$PREFIX/etc/student"
cp hub/nbgrader_config.py "$PREFIX/etc/everyone/nbgrader_config.py"
cp hub/server_config.py "$PREFIX/etc/everyone/jupyter_server_config.py"
cp hub/instructor_nbgrader_config.py "$PREFIX/etc/instructor/nbgrader_config.py"
cp hub/instructor_server_config.py "$PREFIX/etc/instructor/jupyter_server_config.py"
JUPYTER_CONFIG_DIR="$PREFIX/etc/student" "$VENV/bin/python" hub/student_config.py
cp hub/jupyterhub_config.py hub/places.py hub/ports.py hub/processes.py hub/stop.py \
    hub/proxy_guard.js "$PREFIX/etc/"
# The same course id, exchange and safe submit for an nbgrader command typed in a shell with
# this environment (a term on one machine without the hub: docs/instructors.md).
mkdir -p "$VENV/etc/jupyter"
cp hub/nbgrader_config.py "$VENV/etc/jupyter/nbgrader_config.py"
chmod -R a+rX,go-w "$PREFIX"
install -d -o root -g root -m 700 /srv/jupyterhub  # also closes one that exists
echo "JupyterHub for kvlesson installed in $PREFIX"
