#!/usr/bin/env bash
# Install the course and open it in JupyterLab at the first notebook.
#
#   bash scripts/open.sh
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q --disable-pip-version-check -e ".[course]"
# JupyterLab refuses to run as root (a container, a fresh VM) unless told to.
if [ "$(id -u)" = 0 ]; then root=(--allow-root); else root=(); fi
exec jupyter lab "${root[@]}" notebooks/00_start_here/start_here.ipynb
