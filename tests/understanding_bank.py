"""The natural-message bank (``tests/data/understanding``) as readings to check: each message with the
values in play its context names, what it should be understood to ask, and whether it was."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ecomrlve.user.dialogue import ItemNames
from ecomrlve.user.understanding import InPlay, Reading, understand

BANK_DIR = Path(__file__).parent / "data" / "understanding"
GROUPS = ("attribute", "open", "confirm", "which", "reason", "none")
#: Later batches, all held-out (never tuned on), kept apart from ``bank.jsonl`` so that file's halves stay even.
BLIND_BATCHES = ("heldout_batch6.jsonl", "heldout_batch7.jsonl", "heldout_batch8.jsonl", "heldout_batch9.jsonl",
                 "heldout_batch10.jsonl", "heldout_batch11.jsonl", "heldout_batch12.jsonl", "heldout_batch13.jsonl",
                 "heldout_batch14.jsonl", "heldout_batch15.jsonl", "heldout_batch16.jsonl", "heldout_batch17.jsonl",
                 "heldout_batch18.jsonl", "heldout_batch19.jsonl", "heldout_batch20.jsonl", "heldout_batch21.jsonl",
                 "heldout_batch22.jsonl", "heldout_batch23.jsonl",
                 "heldout_batch24.jsonl", "heldout_batch25.jsonl", "heldout_batch26.jsonl",
                 "heldout_batch27.jsonl", "heldout_batch28.jsonl", "heldout_batch29.jsonl", "heldout_batch30.jsonl")
#: Training batches, all train (written to find misreadings to fix).
TRAIN_BATCHES = ("train_batch7.jsonl", "train_batch8.jsonl", "train_batch9.jsonl", "train_batch10.jsonl",
                 "train_batch11.jsonl", "train_batch12.jsonl",
                 "train_batch13.jsonl", "train_batch14.jsonl")
#: Training messages for the learned intent model only (``scripts/train_intent_model.py``), in 288 writer styles
#: no held-out batch uses; the rules were first written without them (later rounds were tuned on them), and they are
#: not asserted to be read exactly.
CORPUS_BATCHES = ("corpus15.jsonl", "corpus16.jsonl", "corpus17.jsonl", "corpus18.jsonl", "corpus19.jsonl", "corpus20.jsonl",
                  "corpus21.jsonl", "corpus22.jsonl", "corpus23.jsonl", "corpus24.jsonl", "corpus25.jsonl",
                  "corpus26.jsonl", "corpus27.jsonl", "corpus28.jsonl", "corpus29.jsonl", "corpus30.jsonl",
                  "corpus31.jsonl", "corpus32.jsonl", "corpus33.jsonl", "corpus34.jsonl", "corpus35.jsonl", "corpus36.jsonl",
                  "corpus37.jsonl", "corpus38.jsonl", "corpus39.jsonl", "corpus40.jsonl", "corpus41.jsonl",
                  "corpus42.jsonl", "corpus43.jsonl", "corpus44.jsonl", "corpus45.jsonl", "corpus46.jsonl",
                  "corpus47.jsonl", "corpus48.jsonl", "corpus49.jsonl", "corpus50.jsonl")
#: Held-out messages retired from blind use: each leaked a withheld value (or was misread), so it was printed and read to fix the
#: misreading behind it (their families are trained in ``train_batch9.jsonl`` and ``train_batch13.jsonl``); blind numbers
#: are also reported without them.
RETIRED = ("attribute-183", "confirm-037", "attribute-b9-012", "attribute-b10-002", "attribute-b10-017", "attribute-b10-022",
           "attribute-b10-031", "attribute-b12-017", "attribute-b12-034", "attribute-b12-054",
           # the only four messages of batches 20 and 21 that leaked, read after both were measured
           "attribute-b20-032", "attribute-b20-039", "attribute-b21-001", "attribute-b21-039",
           # the only three messages of batch 23 that leaked, read after it was measured
           "none-b23-004", "none-b23-034", "none-b23-044",
           # a statement the retrained model (corpora 36-38) read as a go-ahead, found by the blind guard's aggregate
           "none-b9-023",
           # the only eight messages of batches 25 and 26 that leaked, read after both were measured
           "attribute-b25-001", "attribute-b25-008", "attribute-b25-037", "confirm-b25-018", "none-b25-018",
           "attribute-b26-034", "attribute-b26-038", "which-b26-009",
           # the only message of batch 27 that leaked, read after it was measured (its family is not fixed: see README)
           "none-b27-046",
           # a batch 19 statement the retrained model (weaker penalty) read as asking the topics it tells; read to fix that
           "none-b19-034",
           # the only four messages of batch 28 that leaked, read after it was measured (two families fixed, the
           # inverted "how many need you?" after a fronted topic left: see README)
           "attribute-b28-051", "attribute-b28-053", "none-b28-029", "none-b28-039",
           # the only two messages of batch 29 that leaked, read after it was measured ("shoot" as an interjection
           # fixed; the options after an open question in a cowboy's word for a brand, "outfit", left: see README)
           "none-b29-036", "attribute-b29-048",
           # six held-out messages the leak check printed while the hidden-layer model's new leaks were looked for (each
           # batch measured before): "The hoodie?" fixed; the others' families left (see README)
           "which-b11-023", "attribute-b24-038", "none-b24-045", "confirm-b24-036", "attribute-b25-012", "attribute-b29-029")


@dataclass(frozen=True)
class BankMessage:
    id: str
    group: str
    half: str
    context: str
    text: str
    expect: dict[str, Any]
    in_play: InPlay

    def labels(self, columns: tuple[str, ...]) -> tuple[bool, ...]:
        """What the message asks, in the intent model's columns (whether it asks at all, each act, each topic)."""
        e = self.expect
        asked = {"asks": self.group != "none", "attribute": self.group == "attribute",
                 **{act: e[act] for act in ("open", "confirm", "which", "reason")}}
        return tuple(asked[c] if c in asked else c in e["topics"] for c in columns)

    def understood(self, reading: Reading) -> bool:
        """Whether ``reading`` is exactly what the message asks (topics, every flag, the items it names)."""
        e = self.expect
        if sorted(reading.topics) != e["topics"]:
            return False
        if (reading.open, reading.confirm, reading.which, reading.reason) != (e["open"], e["confirm"], e["which"], e["reason"]):
            return False
        return "items" not in e or sorted(reading.items) == sorted(e["items"])


def in_play(context: dict[str, Any]) -> InPlay:
    items = tuple(ItemNames(i["product_id"], i["brand"].lower(), i["model"].lower(), i["noun"].lower())
                  for i in context["items"])
    values = MappingProxyType({topic: tuple(v) for topic, v in context["values"].items()})
    return InPlay(items, values, tuple(context.get("dates", ())))


def load_bank(name: str = "bank.jsonl") -> list[BankMessage]:
    """The messages of one bank file (``bank.jsonl``, one of ``BLIND_BATCHES`` or ``TRAIN_BATCHES``)."""
    contexts = json.loads((BANK_DIR / "contexts.json").read_text())
    plays = {name: in_play(c) for name, c in contexts.items()}
    out = []
    for line in (BANK_DIR / name).read_text().splitlines():
        row = json.loads(line)
        out.append(BankMessage(row["id"], row["group"], row["half"], row["context"], row["text"], row["expect"],
                               plays[row["context"]]))
    return out


def training_messages() -> list[BankMessage]:
    """Every training message, in file order: ``bank.jsonl``'s train half, the training batches, the corpus."""
    return [m for name in ("bank.jsonl", *TRAIN_BATCHES, *CORPUS_BATCHES) for m in load_bank(name) if m.half == "train"]


def seen_texts() -> set[str]:
    """Every training message's text, folded (case, spacing): a held-out message that says the same words as one
    the rules or the model were trained on is not unseen, however it was written."""
    return {fold(m.text) for m in training_messages()}


def fold(text: str) -> str:
    return " ".join(text.lower().split())


def understanding_rates(messages: list[BankMessage]) -> dict[str, tuple[int, int]]:
    """Per group: (understood, total)."""
    hits: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    for m in messages:
        totals[m.group] += 1
        hits[m.group] += m.understood(understand(m.text, m.in_play))
    return {g: (hits[g], totals[g]) for g in GROUPS if totals[g]}


# -- leaks: a withheld value said to a message that did not ask for it -----------------------------------

def said_word(value: str, text: str) -> bool:
    """Whether ``text`` says ``value`` as a whole word or phrase ("Blue" is not said in "Bluetooth")."""
    return re.search(r"(?<![A-Za-z0-9])" + re.escape(value) + r"(?![A-Za-z0-9])", text) is not None


def withheld_values(env_id: str, audit: Any) -> list[str]:
    """The values the shopper still withholds in a CART, recommendation or RETURN episode (there: the reason)."""
    state = audit.problem.state
    if env_id == "CART":
        return [c.value for c in state.constraints if not c.known_to_agent]
    if env_id == "RETURN":
        goal = audit.problem.goal
        return [goal.reason_phrase] if goal.reason_withheld and not state.reason_told else []
    return [state.requirements[i].text() for i in state.withheld]


def no_switch(audit: Any) -> bool:
    """No planned change of requirement (which states a new one after the first turn, asked or not)."""
    return getattr(audit.problem.user, "switch", None) is None


def leak_seeds(env: Any, env_id: str, difficulty: int, count: int, minimum: int = 1) -> list[int]:
    """The first ``count`` seeds whose episodes withhold at least ``minimum`` values and plan no switch."""
    seeds = []
    for seed in range(500):
        env.reset(env_id=env_id, difficulty=difficulty, seed=seed)
        if len(withheld_values(env_id, env.audit())) >= minimum and no_switch(env.audit()):
            seeds.append(seed)
            if len(seeds) == count:
                break
    return seeds


def leaks(env: Any, env_id: str, difficulty: int, seeds: list[int], message: BankMessage) -> list[str]:
    """Withheld values the shopper said, in each episode, to ``message`` as the agent's first turn, that the
    message did not ask for (a negative asks for none; an attribute question only for its topics; in RETURN
    only a question about the reason asks for the reason)."""
    from ecomrlve.actions import AgentAction
    from ecomrlve.envs.recommend.requirements import TOPIC_OF_FIELD
    from ecomrlve.user.understanding import TOPIC_OF_ATTRIBUTE

    asked = set(message.expect["topics"])
    out = []
    for seed in seeds:
        env.reset(env_id=env_id, difficulty=difficulty, seed=seed)
        audit = env.audit()
        state = audit.problem.state
        if env_id == "RETURN":
            observation = env.step(AgentAction(message=message.text))
            said = " ".join(m["content"] for m in observation.messages if m["role"] == "user")
            phrase = audit.problem.goal.reason_phrase
            if (state.reason_told or phrase in said) and not message.expect["reason"]:
                out.append(f"{env_id} seed {seed}: {message.text!r} revealed {phrase!r}")
            continue
        if env_id == "CART":
            hidden = [(c, c.value) for c in state.constraints if not c.known_to_agent]
            goal = audit.problem.goal
            topic_of = {id(c): "quantity" if c.attribute == "quantity" else
                        TOPIC_OF_ATTRIBUTE.get(goal.items[c.item].variant_attribute or "", "variant") for c, _ in hidden}
        else:
            hidden = [(i, state.requirements[i].text()) for i in sorted(state.withheld)]
            topic_of = {i: TOPIC_OF_FIELD.get(state.requirements[i].field, "") for i, _ in hidden}
        observation = env.step(AgentAction(message=message.text))
        said = " ".join(m["content"] for m in observation.messages if m["role"] == "user")
        for key, value in hidden:
            revealed = key.revealed if env_id == "CART" else key not in state.withheld
            topic = topic_of[id(key) if env_id == "CART" else key]
            allowed = topic in asked or (env_id == "CART" and "variant" in asked and topic != "quantity")
            if (revealed or (len(value) > 2 and said_word(value, said) and not said_word(value, message.text))) and not allowed:
                out.append(f"{env_id} seed {seed}: {message.text!r} revealed {value!r}")
    return out
