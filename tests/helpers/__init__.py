"""Helpers shared by test modules in several folders (tests/ is on sys.path: `pythonpath` in
pyproject.toml). Fixtures and the hermetic environment stay in tests/conftest.py."""
