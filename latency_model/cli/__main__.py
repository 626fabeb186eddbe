"""``python -m latency_model.cli``: the ``latency-model`` command."""

import sys

from latency_model.cli import main

sys.exit(main())
