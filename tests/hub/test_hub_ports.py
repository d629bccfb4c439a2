"""The hub's ports and a student's processes (hub/ports.py, hub/processes.py): who holds a
port, what the start says when one is taken or any account may bind it, and which accounts
the hub may end. The attacks themselves, as a student on a real hub, are in
tests/system/test_hub.py."""

from __future__ import annotations

import os
import pwd
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from support.hub_session import hub_module

ports = hub_module("ports")
processes = hub_module("processes")


@pytest.fixture
def held():
    """A port this test holds, listening on the loopback address."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]


def test_a_port_held_is_named_with_its_process_and_account(held, tmp_path):
    me = pwd.getpwuid(os.getuid()).pw_name
    [holder] = ports.holders(held)
    assert (holder.pid, holder.account) == (os.getpid(), me)
    # the kernel gives a test a port from 1024 up: one any account may take first
    problem = ports.ports_problem({"public port": held}, tmp_path / "no.pid")
    assert "lets every account bind ports from" in problem and f"({held})" in problem


def test_the_start_refuses_ports_any_account_may_bind(tmp_path, monkeypatch):
    start = tmp_path / "ip_unprivileged_port_start"
    start.write_text("0\n")  # what some container runtimes set
    monkeypatch.setattr(ports, "UNPRIVILEGED", start)
    problem = ports.ports_problem({"public port": 443, "API port": 881}, tmp_path / "no.pid")
    assert "from 0" in problem and "public port (443)" in problem and "sysctl" in problem
    start.write_text("1024\n")
    assert ports.unprivileged_start() == 1024


def test_a_taken_port_below_the_start_is_named(held, tmp_path, monkeypatch):
    start = tmp_path / "ip_unprivileged_port_start"
    start.write_text(str(held + 1))  # as if the held port were root's
    monkeypatch.setattr(ports, "UNPRIVILEGED", start)
    problem = ports.ports_problem({"proxy's API port": held}, tmp_path / "no.pid")
    assert f"proxy's API port ({held}) is held by process {os.getpid()} of" in problem, problem


def test_only_a_proxy_the_hub_recorded_is_ended_as_its_own(tmp_path):
    pid_file = tmp_path / "jupyterhub-proxy.pid"
    pid_file.write_text(str(os.getpid()))  # a process that is no proxy
    assert ports.left_proxy(pid_file) is None
    pid_file.write_text("not a number")
    assert ports.left_proxy(pid_file) is None


def test_the_hub_ends_ordinary_accounts_only():
    for name in ("root", "nobody", "daemon", "no-such-account-kvlesson"):
        assert processes.end_account(name) is False, name
    assert processes.members("no-such-group-kvlesson") == []


@pytest.mark.process
def test_an_ended_hub_its_parent_has_not_yet_reaped_is_not_waited_for(monkeypatch):
    """stop.py waited for the hub's /proc entry to go, which stays while its parent has not read
    its exit status: a hub started by a shell or service that was busy kept the guide's stop
    waiting its whole minute, then a minute more after a SIGKILL that could change nothing."""
    assert ports.running(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # ended, not reaped
        assert Path(f"/proc/{child.pid}").exists()
        assert not ports.running(child.pid)

        def no_wait(seconds):
            raise AssertionError(f"end() waited for a process that had ended ({seconds} s)")

        monkeypatch.setattr(ports, "time", SimpleNamespace(monotonic=time.monotonic, sleep=no_wait))
        ports.end(child.pid, seconds=60)
    finally:
        child.wait()
    assert not ports.running(child.pid)
