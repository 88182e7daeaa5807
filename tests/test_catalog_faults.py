"""Faults injected into a built catalog directory: each ends `run`/`catalog info` with one line, or is
found by `catalog info --verify`; none runs silently different."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from ecomrlve.catalog.embedders import DEFAULT_EMBEDDER
from ecomrlve.catalog.store import _sha256, build_catalog_dir
from ecomrlve.catalog.synthetic import generate_synthetic_catalog
from ecomrlve.catalog.validate import CHECKSUM_KEY, MANIFEST, write_manifest
from ecomrlve.cli import app


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("faults") / "intact"
    build_catalog_dir(generate_synthetic_catalog(450, 1), out, embedder_name=DEFAULT_EMBEDDER, threads=1)
    return out


def manifest_of(directory: Path) -> dict:
    return json.loads((directory / MANIFEST).read_text())


def reseal(directory: Path, change: Callable[[dict], None]) -> None:
    """Change the manifest and seal it again: a consistent-looking manifest that lies."""
    manifest = manifest_of(directory)
    change(manifest)
    write_manifest(directory, manifest)


def refresh_files(directory: Path) -> None:
    """Record the current size and checksum of every file: only content checks can find the fault."""
    def change(manifest: dict) -> None:
        for name in manifest["files"]:
            path = directory / name
            manifest["files"][name] = {"bytes": path.stat().st_size, "sha256": _sha256(path)}
    reseal(directory, change)


def same_size_garbage(path: Path, fill: bytes = b"\x00") -> None:
    path.write_bytes(fill * path.stat().st_size)


def overwrite_half(path: Path, value: int) -> None:
    """Overwrite the first half of a .npy file's data in place (same header, same size)."""
    array = np.load(path, mmap_mode="r+")
    array[: len(array) // 2] = value
    array.flush()


def flip_column_bytes(directory: Path, column: str, value: int) -> None:
    overwrite_half(directory / "columns" / f"{column}.npy", value)


def replace_column(directory: Path, column: str, array: np.ndarray) -> None:
    np.save(directory / "columns" / f"{column}.npy", array)
    refresh_files(directory)


def fewer_text_rows(directory: Path) -> None:
    table = pa.table({"titles": pa.array(["only one"])})
    with pa.OSFile(str(directory / "text.arrow"), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    refresh_files(directory)


def dangling_manifest(directory: Path) -> None:
    (directory / MANIFEST).unlink()
    (directory / MANIFEST).symlink_to(directory / "nowhere.json")


def manifest_is_a_directory(directory: Path) -> None:
    (directory / MANIFEST).unlink()
    (directory / MANIFEST).mkdir()


def edit_manifest(directory: Path) -> None:
    manifest = manifest_of(directory)
    manifest["counts"]["in_stock"] += 1
    (directory / MANIFEST).write_text(json.dumps(manifest))


def shift_vectors(directory: Path) -> None:
    vectors = np.load(directory / "vectors.f16.npy")
    np.save(directory / "vectors.f16.npy", vectors[:-1])
    refresh_files(directory)


def resized(path_name: str, data: bytes = b"garbage") -> Callable[[Path], None]:
    return lambda d: (d / path_name).write_bytes(data)


def truncated(path_name: str) -> Callable[[Path], None]:
    return lambda d: (d / path_name).write_bytes((d / path_name).read_bytes()[:100])


def missing(path_name: str) -> Callable[[Path], None]:
    return lambda d: shutil.rmtree(d / path_name) if (d / path_name).is_dir() else (d / path_name).unlink()


#: name -> (inject, the command that must fail, a fragment of its one-line error)
LOAD_FAULTS: dict[str, tuple[Callable[[Path], None], str, str]] = {
    "garbage BM25 vocab": (resized("lexical/vocab.index.json"), "run", "vocab.index.json has 7 bytes"),
    "garbage BM25 vocab, same size": (lambda d: same_size_garbage(d / "lexical/vocab.index.json", b"{"), "run",
                                      "lexical index unreadable"),
    "garbage BM25 params, same size": (lambda d: same_size_garbage(d / "lexical/params.index.json", b"x"), "run",
                                       "lexical index unreadable"),
    "missing lexical index": (missing("lexical"), "run", "missing file lexical/"),
    "missing FAISS file": (missing("dense.faiss"), "run", "missing file dense.faiss"),
    "truncated FAISS file": (truncated("dense.faiss"), "run", "dense.faiss has 100 bytes"),
    "zeroed FAISS file": (lambda d: same_size_garbage(d / "dense.faiss"), "run", "dense index unreadable"),
    "missing vectors": (missing("vectors.f16.npy"), "run", "missing file vectors.f16.npy"),
    "truncated vectors": (truncated("vectors.f16.npy"), "run", "vectors.f16.npy has 100 bytes"),
    "vectors of another shape": (shift_vectors, "run", "dense index unreadable"),
    "unknown embedder": (lambda d: reseal(d, lambda m: m["embedder"].update(name="magic:model")), "run",
                         "unknown or malformed embedder 'magic:model'"),
    "embedder fingerprint mismatch": (lambda d: reseal(d, lambda m: m["embedder"].update(fingerprint="0" * 16)),
                                      "run", "built with a different 'static:minilm-m2v' model"),
    "missing manifest": (missing(MANIFEST), "run", "not a catalog directory (no manifest.json"),
    "manifest is a dangling symlink": (dangling_manifest, "run", "dangling symbolic link"),
    "manifest is a directory (run)": (manifest_is_a_directory, "run", "manifest.json: not a file"),
    "manifest is a directory (info)": (manifest_is_a_directory, "info", "manifest.json: not a file"),
    "manifest edited": (edit_manifest, "run", "does not match its checksum"),
    "manifest edited (info --verify)": (edit_manifest, "verify", "does not match its checksum"),
    "manifest not JSON": (resized(MANIFEST, b"{nope"), "run", "manifest.json: unreadable"),
    "manifest is a JSON list": (resized(MANIFEST, b"[]"), "info", "expected a JSON object"),
    "manifest without files": (lambda d: reseal(d, lambda m: m.pop("files")), "run", "missing or malformed 'files'"),
    "manifest of another format": (lambda d: reseal(d, lambda m: m.update(format_version=9)), "run",
                                   "format version 9"),
    "manifest with the wrong product count": (lambda d: reseal(d, lambda m: m.update(n_products=451)), "run",
                                              "expected (451,)"),
    "missing column file": (missing("columns/stock.npy"), "run", "missing file columns/stock.npy"),
    "column of another length": (lambda d: replace_column(d, "stock", np.zeros(449, dtype=np.int32)), "run",
                                 "columns/stock.npy has shape (449,)"),
    "column of another dtype": (lambda d: replace_column(d, "stock", np.zeros(450, dtype=np.float32)), "run",
                                "columns/stock.npy has dtype float32"),
    "category codes out of range": (lambda d: (flip_column_bytes(d, "category", 30_000), refresh_files(d)), "run",
                                    "columns/category.npy holds codes outside"),
    "truncated text": (truncated("text.arrow"), "run", "text.arrow has 100 bytes"),
    "garbage derived names, same size": (lambda d: (same_size_garbage(d / "derived/spoken.arrow"), refresh_files(d)),
                                         "run", "derived/ unreadable"),
    "derived data of another length": (lambda d: (np.save(d / "derived/type_code.npy", np.zeros(449, np.int32)),
                                                  refresh_files(d)), "run", "derived/ does not match"),
    "truncated derived view": (truncated("derived/main_views/price_cents.npy"), "run",
                               "derived/main_views/price_cents.npy has 100 bytes"),
    "text with fewer rows": (fewer_text_rows, "run", "text.arrow has 1 rows"),
}

#: Same-size corruption that loading cannot see cheaply: `catalog info --verify` must name the file.
VERIFY_FAULTS: dict[str, tuple[Callable[[Path], None], str]] = {
    "corrupted stock bytes": (lambda d: flip_column_bytes(d, "stock", 7), "columns/stock.npy"),
    "corrupted price bytes": (lambda d: flip_column_bytes(d, "price_cents", 1), "columns/price_cents.npy"),
    "corrupted vectors, same size": (lambda d: overwrite_half(d / "vectors.f16.npy", 0),
                                     "vectors.f16.npy"),
    "manifest without a checksum (built before sealing)": (
        lambda d: (d / MANIFEST).write_text(json.dumps({k: v for k, v in manifest_of(d).items() if k != CHECKSUM_KEY})),
        MANIFEST),
}


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def command(kind: str, directory: Path):
    if kind == "run":
        return invoke("run", "--catalog", str(directory), "--env", "PD", "--episodes", "1")
    return invoke("catalog", "info", str(directory), *(["--verify"] if kind == "verify" else []))


@pytest.fixture
def copy(built, tmp_path) -> Path:
    out = tmp_path / "catalog"
    shutil.copytree(built, out)
    return out


def test_the_intact_directory_runs_and_verifies(copy: Path) -> None:
    assert command("run", copy).exit_code == 0
    verified = command("verify", copy)
    files = len(json.loads((copy / MANIFEST).read_text())["files"])
    assert verified.exit_code == 0 and f"all {files} files match" in verified.output


@pytest.mark.parametrize("fault", list(LOAD_FAULTS))
def test_a_fault_ends_in_one_line(copy: Path, fault: str) -> None:
    inject, kind, fragment = LOAD_FAULTS[fault]
    inject(copy)
    result = command(kind, copy)
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert fragment in lines[0], lines[0]


@pytest.mark.parametrize("fault", list(VERIFY_FAULTS))
def test_same_size_corruption_is_found_by_verify(copy: Path, fault: str) -> None:
    inject, name = VERIFY_FAULTS[fault]
    inject(copy)
    result = command("verify", copy)
    assert result.exit_code == 1 and name in " ".join(result.output.split()), result.output
