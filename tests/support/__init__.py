"""Builders and fixtures shared by the tests (pyproject.toml puts tests/ on the import path)."""
