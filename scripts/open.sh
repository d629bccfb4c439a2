#!/usr/bin/env bash
# Open the course in JupyterLab.
#
#   bash scripts/open.sh                # a student: notebooks/ at notebook 0, Validate only
#   bash scripts/open.sh --instructor   # an instructor: the repository root, every nbgrader tool
#   bash scripts/open.sh --port 9000    # any other argument goes to `jupyter lab`
#
# Stop the server with Ctrl+C twice in this terminal, or File > Shut Down in JupyterLab.
#
# The Python: the active virtual environment (VIRTUAL_ENV or CONDA_PREFIX) if there is one,
# else the repository's own .venv, made from python3 on the first run (a system Python
# marked "externally managed" refuses pip). The course goes in with pip (editable, with the
# `course` extra, at the versions of constraints.txt, which CI tests) on the first run and again
# only when pyproject.toml or constraints.txt changes. For the tests:
# KVLESSON_PYTHON names a Python that already has the course (no venv, no pip).
#
# A student's JupyterLab (`kvlesson open`, kvlesson/delivery/lab.py) serves notebooks/
# (every notebook and every link between them opens; solutions/ is out of reach) and reads its
# Jupyter config from .kvlesson/student/, where `kvlesson student --user` hides nbgrader's
# instructor tools and the news question: the instructor's own config (~/.jupyter) is never
# touched. The server starts in the repository root, so the Validate button reads the course's
# nbgrader_config.py.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
state=$repo/.kvlesson  # gitignored: the install stamp and the student's Jupyter config

role=student
if [ "${1:-}" = --instructor ]; then role=instructor; shift; fi

# --- a Python with the course ---------------------------------------------------------------
need_python() {
  if ! "$1" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    echo "The course needs Python 3.10 or newer; $1 is $("$1" --version 2>&1 || echo missing)." >&2
    exit 1
  fi
}
if [ -n "${KVLESSON_PYTHON:-}" ]; then
  python=$KVLESSON_PYTHON
  install=no
elif [ -n "${VIRTUAL_ENV:-}${CONDA_PREFIX:-}" ]; then
  python=$(command -v python3 || command -v python || true)
  [ -n "$python" ] || { echo "No python3 in the active environment (${VIRTUAL_ENV:-$CONDA_PREFIX})." >&2; exit 1; }
  install=yes
else
  if [ ! -x .venv/bin/python ]; then
    command -v python3 >/dev/null || { echo "The course needs python3 (3.10 or newer) on PATH." >&2; exit 1; }
    need_python python3
    echo "Making the course's virtual environment in .venv (once) ..."
    if ! python3 -m venv .venv; then
      rm -rf .venv
      echo "python3 could not make a virtual environment. On Debian or Ubuntu install" \
           "its venv module: sudo apt-get install python3-venv" >&2
      exit 1
    fi
  fi
  python=$repo/.venv/bin/python
  install=yes
fi
need_python "$python"

if [ "$install" = yes ]; then
  # What the last install was for: this Python, this pyproject.toml and constraints.txt, and
  # nothing missing
  # (-I: the repository's own folder is not on the path, so kvlesson must be installed).
  installed=$("$python" -I -c '
import hashlib, importlib.util, sys
missing = [m for m in ("kvlesson", "jupyterlab", "nbgrader", "ipywidgets")
           if importlib.util.find_spec(m) is None]
pins = open("pyproject.toml", "rb").read() + open("constraints.txt", "rb").read()
print(sys.prefix, hashlib.sha256(pins).hexdigest(), *missing)')
  if [ "$installed" != "$(cat "$state/installed" 2>/dev/null)" ]; then
    echo "Installing the course into $("$python" -c 'import sys; print(sys.prefix)') (about a minute the first time) ..."
    "$python" -m pip install -q --disable-pip-version-check -e ".[course]" -c constraints.txt
    mkdir -p "$state"
    "$python" -I -c '
import hashlib, sys
pins = open("pyproject.toml", "rb").read() + open("constraints.txt", "rb").read()
print(sys.prefix, hashlib.sha256(pins).hexdigest())' > "$state/installed"
  fi
fi

# --- JupyterLab, by the course's own command ------------------------------------------------
# `kvlesson open` serves notebooks/ with the student's interface (or, --instructor, the
# repository root with every tool), with this Python's programs first on the server's PATH.
if [ "$role" = instructor ]; then set -- --instructor "$@"; fi
exec "$python" -m kvlesson open "$@"
