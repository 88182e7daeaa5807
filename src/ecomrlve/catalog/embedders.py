"""Text embedders for dense retrieval: pluggable, named, offline by default.

An :class:`Embedder` turns texts into L2-normalised float32 vectors and has a ``name`` (recorded
in a catalog directory's manifest and checked when the directory is loaded: vectors from one
model are meaningless to another) and a ``dim``.

- ``static:minilm-m2v`` (the default) is a model2vec static model distilled from
  all-MiniLM-L6-v2 and shipped inside this package (``catalog/assets/``, produced by
  ``scripts/distill_static_embedder.py``). Embedding is a token lookup and a mean, so it needs
  no torch and no download, and embeds tens of thousands of titles per second on one core.
- ``st:<model name or local path>`` uses sentence-transformers (the ``[st]`` extra; torch). It is
  slower by two orders of magnitude on CPU; use it with ``catalog build --ray`` on a GPU node.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import numpy as np

DEFAULT_EMBEDDER = "static:minilm-m2v"
ASSETS = Path(__file__).parent / "assets"


class Embedder(Protocol):
    """Maps texts to unit-length float32 vectors of a fixed dimension."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32 rows, each of L2 norm 1 (or 0 for an empty text)."""
        ...


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


class StaticEmbedder:
    """A model2vec static model from a local folder: mean of per-token vectors, no torch."""

    def __init__(self, name: str, path: Path) -> None:
        from model2vec import StaticModel

        if not (path / "model.safetensors").exists():
            raise FileNotFoundError(f"static embedding model {name!r} not found at {path}")
        self.name = name
        self._model = StaticModel.from_pretrained(path, force_download=False)
        self.dim = int(self._model.embedding.shape[1])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        # Multiprocessing would fork per call; batches are already large and the caller owns
        # parallelism (threads here, Ray workers in a distributed build).
        vectors = self._model.encode(list(texts), use_multiprocessing=False, batch_size=4096)
        return _normalise(vectors)


class SentenceTransformerEmbedder:
    """Any sentence-transformers model (optional ``[st]`` extra): a hub name or a local folder."""

    def __init__(self, name: str, model: str) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # pragma: no cover - depends on the optional extra
            raise ImportError("the 'st:' embedders need sentence-transformers: pip install 'ecomrlve[st]'") from exc
        self.name = name
        self._model = SentenceTransformer(model, device=os.environ.get("ECOMRLVE_ST_DEVICE", "cpu"))
        self.dim = int(self._model.get_sentence_embedding_dimension())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalise(self._model.encode(list(texts), batch_size=256, normalize_embeddings=True))


@lru_cache(maxsize=4)
def get_embedder(name: str = DEFAULT_EMBEDDER) -> Embedder:
    """The embedder called ``name``: ``static:<asset>``, ``static:<folder>`` or ``st:<model>`` (one per process)."""
    kind, _, rest = name.partition(":")
    if kind == "static" and rest:
        path = ASSETS / rest if (ASSETS / rest).is_dir() else Path(rest)
        return StaticEmbedder(name, path)
    if kind == "st" and rest:
        return SentenceTransformerEmbedder(name, rest)
    raise ValueError(f"unknown embedder {name!r}; expected 'static:<model>' or 'st:<model>'")
