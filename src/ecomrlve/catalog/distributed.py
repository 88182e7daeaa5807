"""The distributed build path: embed a catalog's texts with Ray Data (``catalog build --ray``).

Embedding is the only stage that needs a cluster (a transformer embeds ~430 titles/s per CPU:
2M products take hours on one machine, minutes on a GPU node). Each chunk of document texts
becomes a Ray dataset; ``map_batches`` runs one embedder per worker (a callable class, so the
model is loaded once per worker, not per batch) and the rows come back by their row number, so
the result does not depend on the order in which workers finish. The rest of the build (columns,
BM25, FAISS) is unchanged, and so is resuming: the store writes each finished chunk.

Requires the ``[ray]`` extra. Connects to ``$RAY_ADDRESS`` when set, else starts a local Ray.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np


class _EmbedBatch:
    """A Ray Data worker: loads the named embedder once and embeds each batch of texts."""

    def __init__(self, embedder_name: str) -> None:
        from ecomrlve.catalog.embedders import get_embedder

        self.embedder = get_embedder(embedder_name)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        vectors = self.embedder.embed([str(t) for t in batch["text"]])
        return {"row": batch["row"], "vector": vectors.astype(np.float32)}


def ray_embed_chunk(embedder_name: str, *, workers: int = 2, batch_size: int = 4096) -> Callable[[list[str]], np.ndarray]:
    """An ``embed_chunk`` function for :func:`ecomrlve.catalog.store.embed_catalog` that runs on Ray."""
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if not ray.is_initialized():
        ray.init(address=os.environ.get("RAY_ADDRESS"), num_cpus=None if os.environ.get("RAY_ADDRESS") else workers,
                 include_dashboard=False, log_to_driver=False)

    def embed_chunk(texts: list[str]) -> np.ndarray:
        dataset = ray.data.from_items([{"row": i, "text": t} for i, t in enumerate(texts)])
        embedded = dataset.map_batches(_EmbedBatch, fn_constructor_args=(embedder_name,), batch_size=batch_size,
                                       batch_format="numpy", concurrency=workers)
        rows, vectors = [], []
        for batch in embedded.iter_batches(batch_format="numpy", batch_size=None):
            rows.append(batch["row"])
            vectors.append(batch["vector"])
        out = np.empty((len(texts), vectors[0].shape[1] if vectors else 0), dtype=np.float32)
        out[np.concatenate(rows)] = np.concatenate(vectors)
        return out

    return embed_chunk
