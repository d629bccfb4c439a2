"""A boxed kernel as jupyter_client sees it: forked by a zygote, not started as a command.

`BoxedKernelManager` is the notebook's own kernelspec (python3) with interrupts sent as
messages (a signal cannot reach a kernel in its own session) and `ForkedProvisioner` in
place of jupyter_client's local one: launching asks the zygote (`kvlesson.grading.box.
launch`) for a kernel, the sockets are reached through the kernel's connection folder, and
the kernel is watched and killed through its pidfd. Killing it ends its whole process
namespace: nothing it started outlives it.
"""

from __future__ import annotations

import asyncio
import math
import signal
import time
import uuid
from pathlib import Path
from queue import Empty
from typing import Any

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning import LocalProvisioner
from traitlets import DottedObjectName, Type

from kvlesson.grading.box.launch import KILL_WAIT, ForkedKernel, Zygote


class ForkedProvisioner(LocalProvisioner):
    """A kernel forked by `zygote`, with its ledger, notebooks, events file and drawing."""

    def setup(
        self, zygote: Zygote, ledger: dict, notebooks: list[Path], events: Path, draw: bool
    ) -> None:
        self.zygote, self.ledger, self.notebooks = zygote, ledger, notebooks
        self.events, self.draw = events, draw
        self.forked: ForkedKernel | None = None

    @property
    def has_process(self) -> bool:
        return self.forked is not None

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> dict:
        self.forked = self.zygote.kernel(
            dict(self.connection_info), self.ledger, self.notebooks, self.events, self.draw
        )
        self.parent.ip = self.forked.ip
        self.connection_info = {**self.connection_info, "ip": self.forked.ip}
        return self.connection_info

    async def poll(self) -> int | None:
        if self.forked is None or not self.forked.alive():
            return -signal.SIGKILL
        return None

    async def wait(self) -> int | None:
        while await self.poll() is None:
            await asyncio.sleep(0.05)
        return -signal.SIGKILL

    async def send_signal(self, signum: int) -> None:
        if self.forked is not None:
            self.forked.signal(signum)

    async def kill(self, restart: bool = False) -> None:
        """Kill the kernel, and see it gone (jupyter_client would look again in 0.1 s)."""
        await self.send_signal(signal.SIGKILL)
        if self.forked is not None:
            self.forked.alive(wait=KILL_WAIT)

    async def terminate(self, restart: bool = False) -> None:
        await self.send_signal(signal.SIGTERM)

    async def cleanup(self, restart: bool = False) -> None:
        if self.forked is not None:
            self.forked.close()
            self.forked = None


ASK_AGAIN = 1.0  # seconds without the answer to kernel_info before it is asked again


class BoxedKernelClient(AsyncKernelClient):
    """jupyter_client's client, ready as soon as the kernel is."""

    async def _async_wait_for_ready(self, timeout: float | None = None) -> None:
        """Ready when a kernel_info request has its reply on the shell channel and its
        idle status on IOPub (both channels connected), asked again until then; not after
        jupyter_client's fixed waits for IOPub to fall silent (0.2 s and more each time,
        longer than a forked kernel takes to start)."""
        deadline = time.monotonic() + (math.inf if timeout is None else timeout)
        while time.monotonic() < deadline:
            asked = self.kernel_info()
            reply = await self._next(self.shell_channel, asked, "kernel_info_reply")
            if reply is not None and await self._next(self.iopub_channel, asked, "status"):
                self._handle_kernel_info_reply(reply)
                return
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
        raise RuntimeError(f"Kernel didn't respond in {timeout} seconds")

    # What nbclient calls: AsyncKernelClient binds the name to jupyter_client's own method
    # when its class is made, so a subclass's _async_wait_for_ready alone is never called.
    wait_for_ready = _async_wait_for_ready

    async def _next(self, channel, asked: str, kind: str) -> dict | None:
        """The message of `kind` answering `asked` on `channel` (for a status, the idle
        one), or None after ASK_AGAIN seconds; what comes before it is dropped."""
        until = time.monotonic() + ASK_AGAIN
        while (left := until - time.monotonic()) > 0:
            try:
                msg = await channel.get_msg(timeout=left)
            except Empty:
                return None
            if msg["parent_header"].get("msg_id") != asked or msg["msg_type"] != kind:
                continue
            if kind != "status" or msg["content"].get("execution_state") == "idle":
                return msg
        return None


class BoxedKernelManager(AsyncKernelManager):
    """The notebook's own kernelspec, interrupted by message, forked by a zygote."""

    client_class = DottedObjectName("kvlesson.grading.box.kernel.BoxedKernelClient")
    # What km.client() makes: AsyncKernelManager's own default for it is jupyter_client's
    # client class, whatever client_class says.
    client_factory = Type(BoxedKernelClient, klass=AsyncKernelClient)

    @property
    def kernel_spec(self) -> KernelSpec | None:
        spec = super().kernel_spec
        if spec is None or spec.metadata.get("kvlesson_box"):
            return spec
        if spec.language.lower() != "python":
            raise RuntimeError(f"the grading box runs Python kernels, not {spec.language!r}")
        boxed = KernelSpec(**{**spec.to_dict(), "resource_dir": spec.resource_dir})
        boxed.interrupt_mode = "message"
        boxed.metadata = {**spec.metadata, "kvlesson_box": True}
        self._kernel_spec = boxed
        return boxed

    def fork_from(
        self, zygote: Zygote, ledger: dict, notebooks: list[Path], events: Path, draw: bool
    ):
        """Have the next start fork its kernel from `zygote` (see ForkedProvisioner)."""
        self.kernel_id = self.kernel_id or str(uuid.uuid4())
        provisioner = ForkedProvisioner(
            kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self
        )
        provisioner.setup(zygote, ledger, notebooks, events, draw)
        self.provisioner = provisioner
