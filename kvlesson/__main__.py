"""`python -m kvlesson VERB ...`: the one command, `kvlesson` (kvlesson.cli)."""

from kvlesson.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
