"""A small learned reading of what an agent message asks, for the messages the rules read as asking nothing.

The rule layer (:mod:`ecomrlve.user.understanding`) reads the writers whose phrasings it was tuned on; a new
writer's go-ahead ("u good for me to lock it in?") or reason ("wetin do am?") finds no cue there. This model
is trained on the labelled messages of many writers (``tests/data/understanding``; ``scripts/train_intent_model.py``
writes ``assets/intent_model.npz``): a network with one hidden layer of 16 ReLU units over hashed word, word-pair
and character n-grams of the message with the values, item names, prices and numbers in play masked, so it learns
how a question is asked, not which product it names, and a word by the words around it. It reads acts only (any
ask, an open question, the go-ahead, which order, why), never a requirement topic: a topic reading makes the shopper say that topic's
withheld value, so topics stay with the rules, which ground each one in the message's words. It also tells
whether a message asks about a requirement at all: a question about one the rules have no topic for is not taken
for an open question (which makes the shopper say every withheld value), and one in a shape the rules take for no
question ("Stainless steel or cast iron. Decide, please.") is handed back to them to read its topics.

Deterministic and offline: features are ``zlib.crc32`` hashes (not ``hash()``), the weights shipped arrays, a
prediction the sum of a few hundred of their rows and one small product (tens of microseconds).
"""

from __future__ import annotations

import functools
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numba
import numpy as np

from ecomrlve.user.dialogue import ItemNames
from ecomrlve.user.text import PRICE, split_words


class InPlay(Protocol):
    """What the model masks in a message: the values and items in play (``understanding.InPlay``; the rules call
    the model, so it names only what it reads of them)."""

    @property
    def items(self) -> tuple[ItemNames, ...]: ...

    def value_index(self) -> dict[str, tuple[tuple[str, str, bool], ...]]: ...


#: What the model predicts for a message (its columns): whether it asks the shopper anything, whether it asks about
#: a requirement (any, also one the shopper has no topic for: "What battery life are you after?"), and each act.
ACTS = ("asks", "attribute", "open", "confirm", "which", "reason")
#: Hashed feature space (a power of two).
DIMENSION = 1 << 15
MODEL_PATH = Path(__file__).parent / "assets" / "intent_model.npz"

_NUMBER = re.compile(r"\d+")
_CHAR_GRAMS = (3, 4, 5)


def masked_words(text: str, in_play: InPlay) -> list[str]:
    """The message's normalised words with each value in play said as ``z`` and its topic (``zcolor``), each
    item's brand or model words as ``zitem``, each price as ``zprice`` and every other number as ``znum``."""
    words = split_words(PRICE.sub(" zprice ", text))
    index = in_play.value_index()
    names = {w for item in in_play.items for name in (item.brand, item.model) for w in name.split() if len(w) > 1}
    out: list[str] = []
    i = 0
    while i < len(words):
        matched, topic = 0, ""
        for value_topic, phrase, _capitals in index.get(words[i], ()):
            span = phrase.split()
            if len(span) > matched and words[i:i + len(span)] == span:
                matched, topic = len(span), value_topic
        if matched:
            out.append("z" + topic)
            i += matched
            continue
        word = words[i]
        out.append("zitem" if word in names else "znum" if _NUMBER.fullmatch(word) else word)
        i += 1
    return out


def features(text: str, in_play: InPlay) -> np.ndarray:
    """Sorted distinct hashed feature indices of ``text`` (words, word pairs, the opening and closing words,
    character n-grams of each word, whether it holds a question mark)."""
    words = masked_words(text, in_play)
    grams = ["q" if "?" in text else "noq"]
    if words:
        grams += ["f:" + words[0], "l:" + words[-1], "s:" + "_".join(words[:2])]
    grams += ["b:" + a + "_" + b for a, b in zip(words, words[1:])]
    hashed = [_hashed(g) for g in grams]
    for w in dict.fromkeys(words):
        hashed += _word_features(w)
    return np.unique(np.array(hashed, dtype=np.int64))


def _hashed(gram: str) -> int:
    return zlib.crc32(gram.encode()) % DIMENSION


@functools.lru_cache(maxsize=1 << 16)
def _word_features(word: str) -> tuple[int, ...]:
    """The hashed features of one word: itself and its character n-grams (kept: most words recur)."""
    bounded = "<" + word + ">"
    grams = ["w:" + word] + ["c" + bounded[i:i + k] for k in _CHAR_GRAMS for i in range(max(1, len(bounded) - k + 1))]
    return tuple(_hashed(g) for g in grams)


@dataclass(frozen=True)
class IntentModel:
    """Weights of a network with one hidden layer of ReLU units over :func:`features`, one output per column: a
    multi-label logistic regression over learned combinations of the features, so that a word counts by the words
    around it ("say yes" asks, "you said yes" tells)."""

    columns: tuple[str, ...]
    hidden: np.ndarray  # (DIMENSION, units) float32: each feature's input to each hidden unit
    hidden_bias: np.ndarray  # (units,) float64
    output: np.ndarray  # (units, len(columns)) float64
    output_bias: np.ndarray  # (len(columns),) float64

    def save(self, path: Path) -> None:
        np.savez_compressed(path, columns=np.array(self.columns), hidden=self.hidden, hidden_bias=self.hidden_bias,
                            output=self.output, output_bias=self.output_bias)

    @classmethod
    def load(cls, path: Path) -> IntentModel:
        with np.load(path) as data:
            return cls(tuple(str(c) for c in data["columns"]), data["hidden"].astype(np.float32),
                       data["hidden_bias"].astype(np.float64), data["output"].astype(np.float64),
                       data["output_bias"].astype(np.float64))

    def probabilities(self, text: str, in_play: InPlay) -> dict[str, float]:
        """The chance of each column for ``text``."""
        index = features(text, in_play)
        # in float64 and summed along one axis in a fixed order (no BLAS): float32 rows summed in another order
        # (another CPU's SIMD) cannot move a chance across a threshold
        units = self.hidden_bias + self.hidden[index].sum(axis=0, dtype=np.float64) / np.sqrt(max(len(index), 1))
        logits = self.output_bias + (np.maximum(units, 0.0)[:, None] * self.output).sum(axis=0)
        return dict(zip(self.columns, (1.0 / (1.0 + np.exp(-logits))).tolist()))


@functools.lru_cache(maxsize=1)
def shipped() -> IntentModel:
    """The model shipped with the package (``scripts/train_intent_model.py`` writes it)."""
    return IntentModel.load(MODEL_PATH)


def probabilities(text: str, in_play: InPlay) -> dict[str, float]:
    """The shipped model's chance of each of :data:`ACTS` for ``text``."""
    return shipped().probabilities(text, in_play)


def fit(columns: Sequence[str], examples: Sequence[tuple[str, InPlay, Sequence[bool]]], units: int = 16,
        steps: int = 300, l2: float = 1e-4, rate: float = 0.01, seed: int = 0) -> IntentModel:
    """The network over :func:`features` that predicts each example's labels (one bool per column): full-batch Adam
    from weights drawn by a seeded generator, every sum in compiled loops of a fixed order (no BLAS, whose order
    depends on the CPU), so the same examples give the same weights on any machine."""
    rows = [features(text, in_play) for text, in_play, _ in examples]
    labels = np.array([list(row) for _, _, row in examples], dtype=np.float32)
    lengths = np.array([len(r) for r in rows], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    # only the features some example has get a gradient: train their rows, each example's as positions among them
    used, at = np.unique(np.concatenate(rows), return_inverse=True)
    at = at.astype(np.int64)
    scale = (1.0 / np.sqrt(np.maximum(lengths, 1))).astype(np.float32)
    rng = np.random.default_rng(seed)
    params = [(rng.standard_normal((len(used), units)) * 0.1).astype(np.float32), np.zeros(units, np.float32),
              (rng.standard_normal((units, len(columns))) / np.sqrt(units)).astype(np.float32),
              np.zeros(len(columns), np.float32)]
    moments = [(np.zeros_like(p), np.zeros_like(p)) for p in params]
    for t in range(1, steps + 1):
        grads = _gradients(starts, at, scale, labels, *params)
        for param, grad, (first, second) in zip(params, grads, moments):
            if param.ndim == 2:
                grad += l2 * param  # weight decay on the weights, not the biases
            first *= 0.9
            first += 0.1 * grad
            second *= 0.999
            second += 0.001 * grad * grad
            param -= rate * (first / (1 - 0.9 ** t)) / (np.sqrt(second / (1 - 0.999 ** t)) + 1e-8)
    hidden, hidden_bias, output, output_bias = params
    full = np.zeros((DIMENSION, units), np.float32)
    full[used] = hidden
    return IntentModel(tuple(columns), full, hidden_bias.astype(np.float64), output.astype(np.float64),
                       output_bias.astype(np.float64))


@numba.njit(cache=True)
def _gradients(starts: np.ndarray, at: np.ndarray, scale: np.ndarray, labels: np.ndarray, hidden: np.ndarray,
               hidden_bias: np.ndarray, output: np.ndarray,
               output_bias: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The mean cross-entropy's gradient for each weight, one example at a time (``at[starts[r]:starts[r + 1]]``:
    example ``r``'s feature rows)."""
    units, columns = output.shape
    grad_hidden = np.zeros_like(hidden)
    grad_hidden_bias = np.zeros_like(hidden_bias)
    grad_output = np.zeros_like(output)
    grad_output_bias = np.zeros_like(output_bias)
    pre = np.empty(units, np.float32)
    back = np.empty(units, np.float32)
    error = np.empty(columns, np.float32)
    n = len(starts) - 1
    for r in range(n):
        pre[:] = 0.0
        for k in range(starts[r], starts[r + 1]):
            for u in range(units):
                pre[u] += hidden[at[k], u]
        for u in range(units):
            pre[u] = pre[u] * scale[r] + hidden_bias[u]
        for c in range(columns):
            logit = output_bias[c]
            for u in range(units):
                logit += max(pre[u], 0.0) * output[u, c]
            error[c] = (1.0 / (1.0 + np.exp(-logit)) - labels[r, c]) / n
            grad_output_bias[c] += error[c]
        for u in range(units):
            back[u] = 0.0
            if pre[u] > 0.0:
                for c in range(columns):
                    grad_output[u, c] += pre[u] * error[c]
                    back[u] += output[u, c] * error[c]
            grad_hidden_bias[u] += back[u]
            back[u] *= scale[r]
        for k in range(starts[r], starts[r + 1]):
            for u in range(units):
                grad_hidden[at[k], u] += back[u]
    return grad_hidden, grad_hidden_bias, grad_output, grad_output_bias
