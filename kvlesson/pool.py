"""The pool of blocks, with prefix caching.

Without prefix caching a block is just a count: taken when a chat grows or
joins, given back when it finishes or is paused.

With prefix caching (vLLM's enable_prefix_caching) a block that a chat has
filled, all 16 tokens computed, gets a name: what its tokens are. A chat
that joins looks its first blocks up by name and uses the ones found instead
of computing them again (a hit). A named block is shared: it stays in use
while any running chat uses it. When the last one lets go it stays in the
pool with its content, cached, until a chat needs a block and no plain free
block is left; then the cached block used longest ago is emptied first
(vLLM frees a chat's blocks last-first, so its tail goes before its head).

Conservation: plain free + cached + blocks in use = the pool, always.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Hashable, Iterable, Sequence

Name = Hashable  # what a block's tokens are: (text, block number)


class BlockPool:
    """Free blocks (plain, and cached by name, oldest first) and the named blocks in use."""

    def __init__(self, blocks: int):
        self.blocks = blocks
        self.plain = blocks  # free blocks with nothing cached in them
        self.cached: OrderedDict[Name, None] = OrderedDict()  # free, least recently used first
        self.users: dict[Name, int] = {}  # named blocks in use: how many chats use each

    @property
    def free(self) -> int:
        """Blocks a chat can take: plain ones, then cached ones (emptied)."""
        return self.plain + len(self.cached)

    def take(self, n: int) -> None:
        """Take n blocks for new tokens: plain ones first, then empty the oldest cached."""
        plain = min(n, self.plain)
        self.plain -= plain
        for _ in range(n - plain):
            self.cached.popitem(last=False)

    def has(self, name: Name) -> bool:
        """True if a block with this content is in the pool, in use or cached."""
        return name in self.users or name in self.cached

    def hits(self, names: Iterable[Name]) -> list[Name]:
        """The leading names found in the pool (the lookup stops at the first miss)."""
        found = []
        for name in names:
            if not self.has(name):
                break
            found.append(name)
        return found

    def cached_among(self, names: Sequence[Name]) -> int:
        """How many of these names sit in cached (free) blocks."""
        return sum(name in self.cached for name in names)

    def reuse(self, names: Sequence[Name]) -> None:
        """A joining chat uses these found blocks: cached ones leave the free list."""
        for name in names:
            if name in self.cached:
                del self.cached[name]
                self.users[name] = 1
            else:
                self.users[name] += 1

    def name(self, name: Name) -> bool:
        """A chat filled one of its own blocks: name it, if no block of that content is in
        the pool (else it stays a private copy). True if it was named."""
        if self.has(name):
            return False
        self.users[name] = 1
        return True

    def give_back(self, slots: Sequence[Name | None]) -> None:
        """A chat lets go of its blocks (named or private, in block order), last block first."""
        for name in reversed(slots):
            if name is None:
                self.plain += 1
                continue
            self.users[name] -= 1
            if not self.users[name]:
                del self.users[name]
                self.cached[name] = None

    def evicted_by(self, name: Name, taken: int) -> bool:
        """True if taking `taken` more blocks empties the cached block `name` (it is cached)."""
        gone = taken - self.plain
        if gone <= 0:
            return False
        for position, cached in enumerate(self.cached):
            if cached == name:
                return position < gone
            if position >= gone:
                return False
        return False
