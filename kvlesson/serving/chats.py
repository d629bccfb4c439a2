"""The chats the toy server serves.

A chat is a prompt (tokens the user sent) and a reply (tokens the server will
write). The lesson's 600 chats are one seeded draw, all waiting at time zero.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import ClassVar, Iterable

from kvlesson.arguments import whole

# The lesson's draw: log-uniform prompts of 300..6,000 tokens and replies of
# 40..400, one generator, prompt then reply, chat by chat.
SEED = 2026
CHATS = 600
PROMPT_RANGE = (300, 6_000)
REPLY_RANGE = (40, 400)


@dataclass(frozen=True)
class Chat:
    """One chat: `prompt` tokens in, `reply` tokens out (both at least 1).

    As the servers see it, a plain chat waits from time zero and shares no text
    with another (`arrives` and `shared`, which a `Request` sets per chat).
    """

    prompt: int
    reply: int
    arrives: ClassVar[float] = 0.0
    shared: ClassVar[tuple[tuple[str, int], ...]] = ()

    def __post_init__(self) -> None:
        whole("prompt", self.prompt, 1)
        whole("reply", self.reply, 1)

    @property
    def tokens(self) -> int:
        """The longest this chat gets: prompt and reply together."""
        return self.prompt + self.reply


def lesson_chats(seed: int = SEED, n: int = CHATS) -> list[Chat]:
    """`n` chats drawn the lesson's way from `random.Random(seed)`.

    >>> lesson_chats()[0]
    Chat(prompt=429, reply=127)
    """
    seed = whole("seed", seed, 0)
    n = whole("n", n, 1)
    rng = random.Random(seed)

    def log_uniform(low: int, high: int) -> int:
        return round(math.exp(rng.uniform(math.log(low), math.log(high))))

    chats = []
    for _ in range(n):
        prompt = log_uniform(*PROMPT_RANGE)
        chats.append(Chat(prompt, log_uniform(*REPLY_RANGE)))
    return chats


def as_chats(chats: Iterable[Chat | tuple[int, int]]) -> list[Chat]:
    """The chats as a list of Chat, accepting (prompt, reply) pairs; never empty."""
    if isinstance(chats, (str, bytes)) or not isinstance(chats, Iterable):
        raise TypeError(
            f"chats must be a list of Chat or (prompt, reply) pairs, not {type(chats).__name__}"
        )
    out = []
    for i, chat in enumerate(chats):
        if isinstance(chat, Chat):
            out.append(chat)
        elif isinstance(chat, (tuple, list)) and len(chat) == 2:
            out.append(Chat(*chat))
        else:
            raise TypeError(f"chats[{i}] must be a Chat or a (prompt, reply) pair, not {chat!r}")
    if not out:
        raise ValueError("chats must hold at least one chat, got an empty list")
    return out
