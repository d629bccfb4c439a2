"""The grader's socket to a zygote: one JSON message at a time, with open descriptors.

A grading worker and its zygote (`kvlesson.grading.box.launch`, `zygote`) talk over a Unix
socket pair of the SEQPACKET kind (a message arrives whole or not at all): the zygote's
walls and limits once, then a request for each kernel, which carries the events file and
the submission's notebooks as descriptors; a kernel answers with a descriptor of itself
and one of its connection folder, or says why it could not start.
"""

from __future__ import annotations

import array
import json
import socket

MESSAGE_BYTES = 1 << 20  # one message on the socket, at most
MOST_FDS = 64  # descriptors in one message: the events file, and a notebook each


def send(sock: socket.socket, message: dict, fds: list[int] = ()) -> None:
    """One message, and descriptors passed with it."""
    extra = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
    sock.sendmsg([json.dumps(message).encode()], extra)


def receive(sock: socket.socket) -> tuple[dict | None, list[int]]:
    """One message and its descriptors; (None, []) when the other end closed."""
    data, extra, _, _ = sock.recvmsg(MESSAGE_BYTES, socket.CMSG_LEN(MOST_FDS * 4))
    fds = array.array("i")
    for level, kind, payload in extra:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    return (json.loads(data) if data else None), list(fds)
