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
import signal
import uuid
from pathlib import Path
from typing import Any

from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning import LocalProvisioner

from kvlesson.grading.box.launch import ForkedKernel, Zygote


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
        await self.send_signal(signal.SIGKILL)

    async def terminate(self, restart: bool = False) -> None:
        await self.send_signal(signal.SIGTERM)

    async def cleanup(self, restart: bool = False) -> None:
        if self.forked is not None:
            self.forked.close()
            self.forked = None


class BoxedKernelManager(AsyncKernelManager):
    """The notebook's own kernelspec, interrupted by message, forked by a zygote."""

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
