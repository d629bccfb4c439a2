#!/usr/bin/env bash
# Set up and run every test of the course: what CI runs (.ci/run), and what
# the README's test command runs on a fresh machine.
#
#   bash scripts/test.sh               # everything
#   bash scripts/test.sh -k explorers  # extra arguments go to pytest
set -euo pipefail
cd "$(dirname "$0")/.."

# The browser test drives Debian's chromium (never Playwright's own download).
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "The browser test needs Debian's chromium: sudo apt-get install -y chromium" >&2
    exit 1
  fi
fi

python -m pip install -q --disable-pip-version-check -e ".[course,test]"
# --nbval re-runs solutions/ and compares every stored text output.
python -m pytest --nbval "$@"
