"""Train the shopper's intent model on the labelled training messages of ``tests/data/understanding``.

    python scripts/train_intent_model.py            # writes src/ecomrlve/user/assets/intent_model.npz

Trains on every training message (``bank.jsonl``'s train half, the training batches, the corpus), never on a
held-out batch. Deterministic: the same messages give the same weights (``tests/test_intent_model.py`` retrains
and compares). Run it after changing the training messages or the model's features, then re-measure with
``benchmarks/bench_understanding.py``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from understanding_bank import training_messages  # noqa: E402

from ecomrlve.user import intent_model  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=intent_model.MODEL_PATH, help="where to write the weights")
    args = parser.parse_args()
    messages = training_messages()
    start = time.perf_counter()
    acts = intent_model.ACTS
    intent_model.fit(acts, [(m.text, m.in_play, m.labels(acts)) for m in messages]).save(args.out)
    print(f"trained on {len(messages)} messages in {time.perf_counter() - start:.0f} s -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
