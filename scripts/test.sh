#!/usr/bin/env bash
# Set up and run every test of the course: what CI runs (.ci/run), and what
# the README's test command runs on a fresh machine.
#
#   bash scripts/test.sh               # everything, every tier: what CI runs
#   bash scripts/test.sh --quick       # the quick tier: no process at all, under a minute
#   bash scripts/test.sh -k explorers  # extra arguments go to pytest
set -euo pipefail
cd "$(dirname "$0")/.."
quick=
if [ "${1:-}" = "--quick" ]; then
  quick=1
  shift
fi

# The browser test drives Debian's chromium (never Playwright's own download); autograde
# runs each submission in Debian's bubblewrap (the grading box, kvlesson/grading/box); as root,
# tests/system/test_hub.py runs a real JupyterHub, whose set-up (hub/setup.sh) needs node with
# npm for its proxy; the tests' own .venv (below) and the hub's need python3's venv. All in one
# apt run.
missing=()
if [ -z "$quick" ]; then  # the quick tier starts no browser, box or hub
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  [ -x /usr/bin/bwrap ] || missing+=(bubblewrap)
fi
python3 -c "import venv, ensurepip" 2>/dev/null || missing+=(python3-venv)  # for .venv
if [ "$(id -u)" = 0 ] && [ -z "$quick" ]; then
  /usr/bin/python3 -c "import venv, ensurepip" 2>/dev/null || missing+=(python3-venv)
  command -v npm >/dev/null && command -v node >/dev/null || missing+=(nodejs npm)
fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "The tests need Debian's ${missing[*]}: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

# The course with the test tools, in the repository's own virtual environment .venv (never the
# machine's Python: what it happens to hold is not what the course ships with), at exactly the
# versions of constraints.txt (scripts/lock.sh writes it; open.sh, Binder and the hub install
# the same); and (as root) the hub's own environment in /opt/kvlesson-hub (JupyterHub, its
# proxy from npm and the course; quick once there), side by side: both mostly wait on the
# package registries. pip runs again only when pyproject.toml or constraints.txt changes.
hub=
if [ "$(id -u)" = 0 ] && [ -z "$quick" ]; then
  bash hub/setup.sh > /tmp/kvlesson-hub-setup.log 2>&1 &
  hub=$!
fi
# The site extra (Sphinx, myst-nb, the book theme): tests/system/test_site.py builds the
# course's website; without it that test fails, it does not skip.
[ -x .venv/bin/python ] || /usr/bin/env python3 -m venv .venv
python=$(pwd)/.venv/bin/python
stamp=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
if [ "$stamp" != "$(cat .venv/kvlesson-test.stamp 2>/dev/null)" ]; then
  "$python" -m pip install -q --disable-pip-version-check -e ".[course,test,site]" -c constraints.txt
  # jsonschema's optional IRI check (rfc3987-syntax, which jupyter-events pulls in through
  # jsonschema[format-nongpl]) builds some 35 Earley parsers when it is imported: 1.4 s in
  # every process that imports nbformat (each nbgrader command, server and papermill run),
  # which halved the speed of grading a notebook here. No Jupyter schema uses the iri
  # formats, and jsonschema leaves them unchecked when the package is absent
  # (jsonschema issue #1428). hub/setup.sh drops it from the hub's environment too.
  "$python" -m pip uninstall -q -y rfc3987-syntax 2>/dev/null || true
  echo "$stamp" > .venv/kvlesson-test.stamp
fi
if [ -n "$hub" ] && ! wait "$hub"; then
  cat /tmp/kvlesson-hub-setup.log >&2
  echo "hub/setup.sh failed (its log is above)" >&2
  exit 1
fi
# One format and one linter for every Python file ([tool.ruff] in pyproject.toml): quick, so
# first, and a change that breaks either stops here with what to run (ruff format; ruff check).
.venv/bin/ruff format --check --quiet . || { echo "ruff format would change the files above: run .venv/bin/ruff format ." >&2; exit 1; }
.venv/bin/ruff check --quiet .
export PATH="$(pwd)/.venv/bin:$PATH" VIRTUAL_ENV="$(pwd)/.venv"
if [ -n "$quick" ]; then
  # The quick tier (tests/conftest.py): every test that starts no process, spread test by test
  # over two workers, hypothesis at its quick profile (a twentieth of each count), no nbval.
  HYPOTHESIS_PROFILE=quick exec "$python" -m pytest -m quick -p no:nbval -n 2 --dist load "$@"
fi
# --nbval re-runs solutions/ and compares every stored text output. Two workers (the
# machine's cores), each test file on one of them, the slowest files first
# (tests/conftest.py) so that neither worker is left alone with a long one at the end.
"$python" -m pytest --nbval -n 2 --dist loadfile --no-loadscope-reorder "$@"
