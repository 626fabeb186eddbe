"""Shared test settings: hypothesis profiles (no deadline; CI uses a fixed, smaller budget)."""

import os

from hypothesis import settings

settings.register_profile("default", deadline=None, max_examples=60)
settings.register_profile("ci", deadline=None, max_examples=40, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")
