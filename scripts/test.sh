#!/usr/bin/env bash
# Set up and run every test of the course: what CI runs (.ci/run), and what
# the README's test command runs on a fresh machine.
#
#   bash scripts/test.sh               # everything
#   bash scripts/test.sh -k explorers  # extra arguments go to pytest
set -euo pipefail
cd "$(dirname "$0")/.."

# The browser test drives Debian's chromium (never Playwright's own download); autograde
# runs each submission in Debian's bubblewrap (the grading box, kvlesson/box).
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/bwrap ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium bubblewrap >/dev/null
  else
    echo "The tests need Debian's chromium and bubblewrap: sudo apt-get install -y chromium bubblewrap" >&2
    exit 1
  fi
fi

python -m pip install -q --disable-pip-version-check -e ".[course,test]"
# tests/test_hub.py runs a real JupyterHub with real accounts, as root (it skips otherwise):
# JupyterHub, its proxy (npm) and the course go into /opt/kvlesson-hub; quick once there.
if [ "$(id -u)" = 0 ]; then
  bash hub/setup.sh
fi
# --nbval re-runs solutions/ and compares every stored text output. Two workers (the
# machine's cores), each test file on one of them: the heavy files (the browser, Binder's
# environment, the hub, grading a class) mostly wait on servers and kernels.
python -m pytest --nbval -n 2 --dist loadfile "$@"
