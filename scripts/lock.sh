#!/usr/bin/env bash
# Refresh constraints.txt: the exact version of every package the course, its tests and the
# hub install, direct or pulled in (what pip resolves today, in a fresh environment).
#
#   bash scripts/lock.sh            # writes constraints.txt; review `git diff constraints.txt`
#
# scripts/test.sh (CI), scripts/open.sh, binder/requirements.txt and hub/setup.sh all install
# with `-c constraints.txt`, so a release on the registry changes nothing until this script
# is run again and the suite passes with what it wrote (bash scripts/test.sh rebuilds .venv
# when constraints.txt changes). Only a package's extras and the hub's JupyterHub are read
# from elsewhere: pyproject.toml and hub/setup.sh (JUPYTERHUB_VERSION).
set -euo pipefail
cd "$(dirname "$0")/.."

# The oldest Python the course is installed with: Debian 12's /usr/bin/python3 (3.11.2), which
# hub/setup.sh builds the hub's environment from. A release that needs a later 3.11 (soupsieve
# 4.1 wants 3.11.5) would make the hub's pip give up; what installs there installs on CI's and
# Binder's later 3.11 too.
python=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3 )}
hub=$(sed -n 's/^JUPYTERHUB_VERSION=\([^ ]*\).*/\1/p' hub/setup.sh)
[ -n "$hub" ] || { echo "no JUPYTERHUB_VERSION= line in hub/setup.sh" >&2; exit 1; }
fresh=$(mktemp -d)
trap 'rm -rf "$fresh"' EXIT

"$python" -m venv "$fresh/venv"
"$fresh/venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
"$fresh/venv/bin/python" -m pip install -q --disable-pip-version-check \
    -e ".[course,test,site]" "jupyterhub==$hub"
{
  echo "# Every package the course, its tests and the hub install, at one version each:"
  echo "# written by scripts/lock.sh from a fresh environment (Python" \
       "$("$fresh/venv/bin/python" -c 'import sys; print(".".join(map(str, sys.version_info[:3])))')," \
       "$(date -u +%Y-%m-%d)); do not edit by hand."
  "$fresh/venv/bin/python" -m pip freeze --exclude-editable --disable-pip-version-check \
      | LC_ALL=C sort -f
} > constraints.txt
echo "constraints.txt: $(grep -c '==' constraints.txt) packages pinned"
