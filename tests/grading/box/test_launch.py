"""A worker's zygotes end side by side (kvlesson.grading.box.launch.Zygotes.close): each is
told to end (its socket closed) before any is waited for. Waited for in turn, a worker with
three zygotes spent their three ends one after the other when the class was done."""

from __future__ import annotations

from kvlesson.grading.box.launch import Zygotes


class Noted:
    """A stand-in for a zygote: it notes what it is asked, in order."""

    def __init__(self, name: str, said: list):
        self.name, self.said = name, said

    def tell(self) -> None:
        self.said.append(("told", self.name))

    def close(self) -> None:
        self.said.append(("closed", self.name))


def test_every_zygote_is_told_before_any_is_waited_for(tmp_path):
    said: list = []
    zygotes = Zygotes(tmp_path)
    zygotes.zygotes = {name: Noted(name, said) for name in ("first run", "without a", "without b")}
    zygotes.close()
    assert said[:3] == [("told", "first run"), ("told", "without a"), ("told", "without b")]
    assert [what for what, _ in said[3:]] == ["closed"] * 3
    assert zygotes.zygotes == {}
