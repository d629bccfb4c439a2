"""The accounts of the exchange: who owns an entry of inbound, and who runs the command.

Collect leaves out a folder named after one student but made by another (unless the account
collecting made it); submit names, in words, an account that may not hand in.
"""

from __future__ import annotations

import os
import pwd


def account_name(uid: int) -> str:
    """The name of the account with the user id `uid` (its number, in words, if none)."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"user id {uid}"


def _me() -> str:
    return pwd.getpwuid(os.getuid()).pw_name
