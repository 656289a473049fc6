"""The suite's one process-wide setting: MKL's AVX2 code path on every x86 machine.

MKL picks its kernels by processor, and on AVX-512 it rounds a product's last bits differently
from AVX2. The golden tests that replay recorded choices (``tests/test_guided_search.py``: a
search whose close calls go the other way at a different last bit) were recorded on AVX2, so
``MKL_CBWR=AVX2`` (MKL's conditional numerical reproducibility) makes every machine compute what
they recorded. It must be set before torch loads MKL, hence here; a value set outside is kept.
"""

from __future__ import annotations

import os

os.environ.setdefault("MKL_CBWR", "AVX2")
