"""The boxed kernel's client as nbclient gets it (kvlesson.grading.box.kernel)."""

from __future__ import annotations

from kvlesson.grading.box.kernel import BoxedKernelClient, BoxedKernelManager


def test_nbclient_gets_the_boxs_own_client_and_its_wait_for_ready():
    """nbclient makes its client with km.client() and calls its wait_for_ready. Both must be
    the box's: it is ready once the kernel has answered on both channels, where jupyter_client's
    waits 0.2 s for IOPub whenever the first status message is lost, as it is for a kernel
    forked at once (each kernel start paid it: the box's own was never called)."""
    client = BoxedKernelManager().client()
    assert isinstance(client, BoxedKernelClient)
    assert type(client).wait_for_ready is BoxedKernelClient._async_wait_for_ready
