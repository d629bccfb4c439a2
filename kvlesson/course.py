"""`python -m kvlesson.course`: an earlier release's address of the one command (kvlesson.cli).

It still works for one release, and says what to type now.
"""

from kvlesson.cli import old_address

if __name__ == "__main__":
    raise SystemExit(old_address("kvlesson.course"))
