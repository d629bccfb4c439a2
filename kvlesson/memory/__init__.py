"""The model, part one: one card's memory.

GPUs and models as data (`specs`, read from a `config.json` by `hf_config`, in the
precisions of `precision`), the memory floor that a share splits into weights, reserve,
cache pool and unused (`floor`), a real server's start-up in vLLM's order (`startup`), its
start-up log (`vllm_log`), one rig's measured figures (`rig_measurements`), the same
settings in llama.cpp and TensorRT-LLM (`other_servers`) and binary units (`units`).

May import: `kvlesson.arguments` and this wing. Never `serving`, `lesson` or `grading`.
"""
