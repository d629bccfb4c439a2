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
from itertools import repeat
from typing import Hashable, Sequence

from kvlesson.memory.floor import BLOCK_TOKENS

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

    def hits(self, names: Sequence[Name], limit: int | None = None) -> list[Name]:
        """Of the first `limit` names (all by default), the leading ones found in the pool
        (the lookup stops at the first miss)."""
        users, cached = self.users, self.cached
        limit = len(names) if limit is None else min(limit, len(names))
        for k in range(limit):
            name = names[k]
            if name not in users and name not in cached:
                return names[:k]
        return names[:limit]

    def cached_among(self, names: Sequence[Name]) -> int:
        """How many of these names sit in cached (free) blocks."""
        return sum(map(self.cached.__contains__, names))

    def reuse(self, names: Sequence[Name]) -> None:
        """A joining chat uses these found blocks: cached ones leave the free list."""
        users, cached = self.users, self.cached
        for name in names:
            if name in cached:
                del cached[name]
                users[name] = 1
            else:
                users[name] += 1

    def name(self, name: Name) -> bool:
        """A chat filled one of its own blocks: name it, if no block of that content is in
        the pool (else it stays a private copy). True if it was named."""
        if self.has(name):
            return False
        self.users[name] = 1
        return True

    def give_back(self, slots: Sequence[Name | None]) -> None:
        """A chat lets go of its blocks (named or private, in block order), last block first."""
        users, cached = self.users, self.cached
        private = 0
        for name in reversed(slots):
            if name is None:
                private += 1
            elif users[name] == 1:
                del users[name]
                cached[name] = None
            else:
                users[name] -= 1
        self.plain += private

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


def block_names(owner: Hashable, shared: Sequence[tuple[str, int]], blocks: int) -> list[Name]:
    """What each of a chat's first `blocks` blocks holds: block j of the first shared text
    (a system prompt, earlier turns) that fills it whole, else the chat's own block j."""
    names: list[Name] = []
    for text, tokens in shared:  # a text fills its first tokens // 16 blocks whole
        names.extend(zip(repeat(text), range(len(names), min(tokens // BLOCK_TOKENS, blocks))))
    names.extend(zip(repeat(owner), range(len(names), blocks)))
    return names
