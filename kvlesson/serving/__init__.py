"""The model, part two: a server at work, step by step.

Chats and their arrival over time (`chats`, `arrivals`), a run's settings and what it
reports (`settings`, `results`), the block pool with its prefix cache (`block_pool`), the
proxy at the door (`proxy`), the reference server one step at a time (`server`, `trace`),
the fast engine that gives the same results for sliders (`fast_engine`, `calm_stretch`,
`fast_traffic_engine`), what users feel (`latency`), static batching to compare
(`static_batching`), the cap sweep (`sweep`) and the capstone's deployments (`capstone`).

May import: `kvlesson.arguments`, `kvlesson.memory` and this wing. Never `lesson` or
`grading`.
"""
