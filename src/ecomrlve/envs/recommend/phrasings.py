"""How the recommendation shopper (PD, SUB, BUNDLE; RETURN's replacement) says its acts and requirements."""

from __future__ import annotations

import random
from collections.abc import Iterable

from ecomrlve.catalog.product_type import indefinite, is_plural, spoken_noun
from ecomrlve.envs.recommend import acts as A
from ecomrlve.user.realiser import ActTemplates, join_words, pick

_REQUIREMENT_PHRASES: dict[str, tuple[str, ...]] = {
    "category": ("from the {v} category", "from the {v} section"),  # a named product of another kind
    "price_max": ("for ${v} or less", "for at most ${v}", "costing no more than ${v}", "with a budget of ${v}"),
    "price_min": ("costing at least ${v}", "not cheaper than ${v}", "priced at ${v} or more"),
    "rating_min": ("rated {v} stars or higher", "with a rating of at least {v}", "with {v}+ stars"),
    "ship_days_max": ("shipping in {v} days or less", "arriving within {v} days", "delivered within {v} days"),
    "brand": ("from {v}", "made by {v}", "by {v}"),
    "color": ("in {v}", "in the color {v}", "in {v} color"),
    "size": ("in size {v}", "size {v}"),
    "material": ("made of {v}", "in {v}"),
    "connector_type": ("with a {v} connector", "with {v} connection"),
    "item_form": ("in {v} form", "as a {v}"),
    "wattage_min": ("with at least {v}W", "with {v} watts or more"),
    "screen_size_min": ("with a screen of at least {v} inches", "with a {v}-inch screen or bigger"),
    "weight_max": ("weighing {v} lb or less", "no heavier than {v} lb"),
}


def requirements_text(pairs: Iterable[tuple[str, str]], rng: random.Random) -> str:
    return join_words([pick(rng, _REQUIREMENT_PHRASES[f]).replace("{v}", v) for f, v in pairs])


def _a(noun: str) -> str:
    return indefinite(noun)


def _recommend_text(act: A.RecommendAct, rng: random.Random) -> str:
    """Templates for the recommendation acts (PD, SUB, BUNDLE)."""
    if isinstance(act, A.RequestProducts):
        reqs = (" " + requirements_text(act.requirements, rng)) if act.requirements else ""
        return pick(rng, ["Hi, I'm looking for {a}{r}.", "Hello! Can you recommend {a}{r}?",
                           "I need {a}{r}. What do you suggest?", "Hey, I want to buy {a}{r} - any recommendations?",
                           "Hi there, I'm shopping for {a}{r}."]).replace("{a}", _a(act.noun)).replace("{r}", reqs)
    if isinstance(act, A.RequestSubstitute):
        text = pick(rng, ["I wanted to buy the {o}, but {it} out of stock. Can you suggest something similar?",
                           "The {o} I wanted {is} sold out - what would be a good alternative?",
                           "Hi, I was going to get the {o} but {it} unavailable. Could you find me {sim}?",
                           "Hello! The {o} {is} out of stock. What else would you recommend instead?"])
        plural = is_plural(act.noun)
        text = (text.replace("{sim}", indefinite(act.noun, "similar")).replace("{o}", act.original)
                .replace("{it}", "they're" if plural else "it's").replace("{is}", "are" if plural else "is"))
        if act.requirements:
            text += " " + pick(rng, ["I need it {r}.", "It has to be {r}.", "It must be {r}."]).replace(
                "{r}", requirements_text(act.requirements, rng))
        return text
    if isinstance(act, A.RequestBundle):
        text = pick(rng, ["Hi! I'm {p} and need {l}.", "Hello, I'm {p}. Could you put together {l} for me?",
                           "Hey, I'm {p} - I need {l}. What would you recommend?"])
        text = text.replace("{p}", act.project).replace("{l}", join_words([_a(n) for n in act.nouns]))
        if act.budget:
            text += " " + pick(rng, ["My total budget is ${b}.", "I can spend ${b} in total.",
                                      "Everything together should cost at most ${b}."]).replace("{b}", act.budget)
        by_noun: dict[str, list[tuple[str, str]]] = {}
        for noun, f, v in act.item_requirements:
            by_noun.setdefault(noun, []).append((f, v))
        for noun, pairs in by_noun.items():
            text += " " + pick(rng, ["The {n} should be {r}.", "For the {n}: {r}, please."]).replace(
                "{n}", spoken_noun(noun)).replace("{r}", requirements_text(pairs, rng))
        return text
    if isinstance(act, A.StateRequirements):
        noun = spoken_noun(act.noun)
        parts: list[str] = []
        if act.stated:
            parts.append(pick(rng, ["Sure - I need the {n} {r}.", "Oh right: for the {n}, it has to be {r}.",
                                    "Good question. For the {n}: {r}, that's a must."]).replace(
                "{n}", noun).replace("{r}", requirements_text(act.stated, rng)))
        if act.repeated:
            parts.append(pick(rng, ["As I said, I need the {n} {r}.", "I already told you: the {n} {r}."]).replace(
                "{n}", noun).replace("{r}", requirements_text(act.repeated, rng)))
        parts += [_preference_text(preference, rng) for preference in act.preferences]
        if act.no_preference:
            parts.append(pick(rng, ["No preference on {t}.", "I don't mind about {t}."]).replace(
                "{t}", join_words(list(act.no_preference))))
        return " ".join(parts) or pick(rng, ["That's all I need.", "Nothing else, that's everything."])
    if isinstance(act, A.ChangeRequirement):
        return pick(rng, ["Actually, I changed my mind: I need it {r} instead.", "Oh, one change - make that {r}.",
                           "Sorry, an update: the {n} should be {r}."]).replace(
            "{n}", spoken_noun(act.noun)).replace("{r}", requirements_text([act.requirement], rng))
    if isinstance(act, A.SoldOut):
        return pick(rng, ["Hm, the {p} is sold out now.", "That one is sold out now - the {p} isn't available anymore.",
                           "I just checked: the {p} is out of stock."]).replace("{p}", act.phrase)
    if isinstance(act, A.LooksGood):
        return pick(rng, ["The {p} looks good.", "I like the {p}."]).replace("{p}", act.phrase)
    if isinstance(act, A.MissesRequirement) and act.requirement is None:
        return pick(rng, ["The {p} isn't quite what I'm looking for.", "Hm, not the {p}."]).replace("{p}", act.phrase)
    if isinstance(act, A.MissesRequirement) and act.requirement is not None:
        return pick(rng, ["The {p} doesn't work for me - I need it {r}.", "Not the {p}: it has to be {r}."]).replace(
            "{p}", act.phrase).replace("{r}", requirements_text([act.requirement], rng))
    if isinstance(act, A.NotNeeded):
        return pick(rng, ["I don't need the {p} for this.", "The {p} isn't on my list."]).replace("{p}", act.phrase)
    if isinstance(act, A.UnclearQuestion):
        return pick(rng, ["Sorry, I'm not sure what you mean. I just want good recommendations.",
                           "Hm? I don't follow.", "I'm not sure what you're asking - what do you suggest?"])
    raise TypeError(f"no template for dialogue act {type(act).__name__}")


_PREFERENCE_PHRASES: dict[tuple[str, str], tuple[str, ...]] = {
    ("price", "strong"): ("Cheaper is better for me - the further below ${v}, the better.",
                          "The lower the price the better: the further under ${v}, the happier I am."),
    ("price", "mild"): ("A lower price would be a small plus - the further below ${v}, the better.",
                        "I wouldn't mind saving a bit; the further under ${v}, the nicer."),
    ("rating", "strong"): ("A high rating matters a lot to me.", "The better rated, the better."),
    ("rating", "mild"): ("A better rating would be a nice bonus.", "Good reviews would be a small plus."),
    ("shipping", "strong"): ("Fast shipping matters a lot to me.", "The sooner it arrives, the better."),
    ("shipping", "mild"): ("Faster shipping would be a nice bonus.", "Quick delivery would be a small plus."),
    ("popularity", "strong"): ("I'd really like something popular, with lots of reviews.",
                               "A popular one with many reviews matters to me."),
    ("popularity", "mild"): ("Something popular, with lots of reviews, would be a small plus.",
                             "A well-known one with many reviews would be nice."),
    ("similar", "strong"): ("As close to the {v} as possible, please.", "The more like the {v}, the better."),
    ("similar", "mild"): ("Something a bit like the {v} would be nice.", "Similar to the {v} would be a small plus."),
}


def _preference_text(preference: A.Preference, rng: random.Random) -> str:
    """A soft preference in soft words (never a hard requirement's)."""
    kind, strength, value = preference
    return pick(rng, _PREFERENCE_PHRASES[(kind, strength)]).replace("{v}", value)


RECOMMEND_TEMPLATES = ActTemplates(acts=A.RecommendAct, text=_recommend_text, protected=A.recommend_values)
