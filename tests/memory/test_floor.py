"""The floor plan's split is exact (kvlesson.memory.floor): the whole-number arithmetic that
`memory_parts` takes for every card and model of the course gives, for any sizes, the very
floats and block count that exact fractions give, so a pool of a whole number of blocks is
never one block short; sizes that are not whole numbers of bytes take the fractions."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, strategies as st

import kvlesson as kv
from kvlesson.memory.floor import _split


def by_fractions(share, card, weights, reserve, block_bytes):
    allowed = Fraction(share * card, 100)
    pool = allowed - Fraction(weights) - Fraction(reserve)
    return (
        float(allowed),
        float(pool),
        max(0, int(pool // Fraction(block_bytes))),
        float(card - allowed),
    )


@given(
    share=st.integers(1, 100),
    card=st.integers(1, 2**41),
    weights=st.integers(0, 2**41),
    reserve=st.integers(0, 2**34).map(float),
    block_bytes=st.integers(1, 2**24),
)
def test_whole_bytes_split_as_exact_fractions_do(share, card, weights, reserve, block_bytes):
    assert _split(share, card, weights, reserve, block_bytes) == by_fractions(
        share, card, weights, reserve, block_bytes
    )


def test_a_pool_of_exactly_whole_blocks_keeps_its_last_block():
    block = 16 * 131_072
    card = 100 * (10 * block + 5_000)  # at 1%: 10 blocks of pool after 5,000 bytes of weights
    assert _split(1, card, 5_000, 0.0, block)[2] == 10
    assert _split(1, card, 5_001, 0.0, block)[2] == 9


def test_a_reserve_with_a_fraction_of_a_byte_is_split_exactly():
    assert _split(90, 10**11, 16_060_522_496, 0.5, 2_097_152) == by_fractions(
        90, 10**11, 16_060_522_496, 0.5, 2_097_152
    )


def test_the_course_card_split_is_unchanged():
    parts = kv.memory_parts(90)
    assert parts.blocks == 25720
    assert (
        parts.blocks
        == by_fractions(
            90, parts.gpu.memory_bytes, parts.weights_bytes, parts.reserve_bytes, parts.block_bytes
        )[2]
    )
