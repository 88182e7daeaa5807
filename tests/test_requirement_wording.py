"""Requirements are said as requirements, and BUNDLE says which item each one is of.

A hard requirement (the verifier rejects a product that misses it) is never carried by soft words
("ideally", "I'd like", "would be nice"): soft words are kept for the soft preferences the ranking weighs.
A BUNDLE shopper revealing a withheld requirement names the item it belongs to, in the same sentence.
"""

from __future__ import annotations

import random
import re

import pytest

from ecomrlve.actions import AgentAction
from ecomrlve.catalog.product_type import spoken_noun
from ecomrlve.envs.recommend import acts as A
from ecomrlve.envs.recommend.requirements import TOPIC_OF_FIELD
from ecomrlve.episode import EcomEnv
from ecomrlve.user.realiser import PHRASINGS, TemplateRealiser, sentences

SOFT_WORDS = ("ideally", "i'd like", "would like", "prefer", "if possible", "would be nice", "nice to have",
              "bonus", "a plus", "don't mind")
MARK = "Qzxv"  # a requirement value no template contains
PAIRS = (("brand", MARK), ("color", MARK), ("price_max", "9" + MARK))


def _acts() -> list:
    pairs = PAIRS
    return [A.RequestProducts("mouse", pairs), A.RequestSubstitute("Brightix Nova 21 mouse", "mouse", pairs),
            A.RequestBundle("setting up a home office", ("mouse", "lamp"), "90", tuple(("lamp", f, v) for f, v in pairs)),
            A.StateRequirements("mouse", pairs), A.StateRequirements("mouse", (), pairs),
            A.StateRequirements("mouse", pairs, pairs, ("size",), (("price", "strong", "13"), ("rating", "mild", ""))),
            A.ChangeRequirement("mouse", PAIRS[0]), A.MissesRequirement("Brightix Nova 21 mouse", PAIRS[1])]


@pytest.mark.parametrize("phrasing", PHRASINGS)
def test_no_soft_word_carries_a_hard_requirement(phrasing) -> None:
    realiser = TemplateRealiser(0.0, phrasing)
    for act in _acts():
        for seed in range(40):
            for sentence in sentences(realiser.realise((act,), random.Random(seed))):
                if MARK in sentence:
                    soft = [w for w in SOFT_WORDS if w in sentence.lower()]
                    assert not soft, (type(act).__name__, sentence)


#: a word a shopper understands as asking about each requirement topic
TOPIC_WORDS = {"price": "budget", "brand": "brand", "rating": "rating", "shipping": "delivery time", "color": "color",
               "size": "size", "material": "material", "connector": "connector", "form": "form", "wattage": "wattage",
               "screen": "screen size", "weight": "weight"}


def test_bundle_names_the_item_of_each_revealed_requirement(catalog, search) -> None:
    env = EcomEnv("BUNDLE", catalog=catalog, search=search, overrides={"p_noise": 0.0})
    checked = 0
    for d in (8, 11, 15):
        for seed in range(15):
            env.reset(env_id="BUNDLE", difficulty=d, seed=seed)
            goal = env.audit().problem.goal
            for index in goal.withheld:
                item = goal.item_requirements[index]
                topic = TOPIC_OF_FIELD[item.requirement.field]
                env.reset(env_id="BUNDLE", difficulty=d, seed=seed)
                observation = env.step(AgentAction(message=f"What {TOPIC_WORDS[topic]} do you need?"))
                text = observation.messages[-1]["content"]
                noun = spoken_noun(goal.nouns[item.slot]).lower()
                value = item.requirement.text().lower()
                carrying = [s for s in sentences(text) if re.search(rf"(?<![\w.]){re.escape(value)}(?![\d.]\d)", s.lower())]
                assert any(noun in s.lower() for s in carrying), (d, seed, noun, text)
                checked += 1
    assert checked >= 10
