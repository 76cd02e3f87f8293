"""How much input kubefit reads: the input size bound (`KUBEFIT_MAX_INPUT_BYTES`) and what is read whole into
memory, shared by the reference reading (`kubefit.manifests.parse`) and the streaming reader
(`kubefit.manifests.stream`), which needs them without importing the reference's YAML machinery."""

from __future__ import annotations

import os
from typing import Any

from kubefit.errors import InputError

MAX_INPUT_BYTES = 4 << 30  # a maximum-size cluster as kubectl prints it (5,000 nodes, 150,000 pods) is < 2 GB
REFERENCE_MAX_BYTES = 256 << 20  # what is read whole into memory; larger files only by the streaming reader


def max_input_bytes() -> int:
    """The input size bound: `KUBEFIT_MAX_INPUT_BYTES` (bytes, a plain integer) or 4 GiB."""
    raw = os.environ.get("KUBEFIT_MAX_INPUT_BYTES", "")
    return int(raw) if raw.strip().isdigit() else MAX_INPUT_BYTES


def too_large(limit: int, source: str) -> InputError:
    """The refusal of an input beyond `limit` bytes: the user's bound, or what is read whole."""
    if limit < max_input_bytes():
        return InputError(f"input larger than {limit} bytes, the most kubefit reads whole into memory (stdin, "
                          f"or a file the streaming reader does not take: give it as a file, with kubefit "
                          f"built with its compiled reader)", file=source)
    return InputError(f"input larger than {limit} bytes (KUBEFIT_MAX_INPUT_BYTES raises the limit)", file=source)


def read_bounded(stream: Any, source: str) -> bytes:
    """At most `max_input_bytes()` (and `REFERENCE_MAX_BYTES`) bytes of a stream (text is encoded), to be
    read whole; a longer input is refused, not cut."""
    limit = min(max_input_bytes(), REFERENCE_MAX_BYTES)
    data = stream.read(limit + 1)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    if len(data) > limit:
        raise too_large(limit, source)
    return data
