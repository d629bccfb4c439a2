"""An explorer's frames (kvlesson.lesson.frames): every stop of each slider from the
notebook's setting, each what the same explorer shows there in JupyterLab."""

from __future__ import annotations

import kvlesson as kv
from kvlesson.lesson import explorers
from kvlesson.lesson.frames import frames
from kvlesson.lesson.real_server_explorer import RealServerExplorer


def test_every_stop_of_a_slider_is_a_frame_and_each_is_what_the_explorer_shows_there():
    explorer = explorers.PauseExplorer()
    walked = frames(explorer)
    (track,) = walked.tracks
    assert track.description == "step" and track.home == 0
    assert sorted(walked.shown) == [(i,) for i in range(len(track.labels))]
    for index in (0, 3, len(track.labels) - 1):
        fresh = explorers.PauseExplorer()
        fresh.step.index = index
        shown = walked.shown[(index,)]
        assert (shown.caption, shown.alt, shown.png) == (fresh.caption.value, fresh.alt, fresh.png)


def test_two_sliders_move_one_at_a_time_from_the_notebooks_setting():
    explorer = explorers.CeilingExplorer(share=80, longest=8_000)
    walked = frames(explorer)
    share, longest = walked.tracks
    assert walked.home == (share.labels.index("80"), longest.labels.index("8,000"))
    along_share = {(i, walked.home[1]) for i in range(len(share.labels))}
    along_longest = {(walked.home[0], i) for i in range(len(longest.labels))}
    assert set(walked.shown) == along_share | along_longest  # 100 + 7 - 1 stops
    assert len(walked.shown) == 106
    fresh = explorers.CeilingExplorer(share=80, longest=8_000)
    fresh.longest.value = 128_000
    assert walked.shown[(walked.home[0], len(longest.labels) - 1)].caption == fresh.caption.value
    # the explorer is left where the notebook set it, and computes ahead again
    assert explorer.setting() == (80, 8_000) and not explorer.quiet


def test_controls_that_are_not_sliders_are_said_in_words_and_do_not_move():
    walked = frames(RealServerExplorer("H100_80GB", "LLAMA_31_8B", 1, 90, 131_072))
    assert [t.description for t in walked.tracks] == [
        "GPUs (tensor parallel)",
        "memory share (%)",
        "max_model_len (tokens)",
    ]
    assert walked.fixed == "card H100_80GB, model LLAMA_31_8B, weights bf16, KV cache auto"
    assert len(walked.shown) == 4 + 100 + 5 - 2


def test_a_stop_where_the_server_cannot_start_is_a_frame_too():
    walked = frames(explorers.FloorExplorer(gpu=kv.gpu("A100_80GB")))
    assert "cannot start" in walked.shown[(0,)].caption  # a 1% share holds no block
