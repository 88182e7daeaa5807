"""Surface realisers: *how* the simulated user says a dialogue act.

:class:`TemplateRealiser` (the default) picks among many phrasings and adds noise at
``p_noise(d)``. Any other realiser (e.g. an LLM over an OpenAI-compatible endpoint) implements
the same :class:`Realiser` protocol and plugs in without touching the dialogue manager. A
:class:`RealiserFactory` builds one realiser per episode from an :class:`EpisodeContext` (the
episode key, its noise level and the dialogue so far), which is what a realiser needs that
phrases a message in context.

Every list of phrasings is split in two disjoint halves (:data:`PHRASINGS`): ``train`` takes
the even positions, ``eval`` the odd ones, so an agent evaluated on the ``eval`` set meets
wording it was not trained on.
"""

from __future__ import annotations

import contextvars
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import UnionType
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

if TYPE_CHECKING:
    from ecomrlve.catalog.schema import Catalog

from ecomrlve.catalog.product_type import indefinite, is_plural, spoken_noun
from ecomrlve.registry import env_specs, load
from ecomrlve.user import acts as A
from ecomrlve.user.noise import add_noise

ATTRIBUTE_WORDS = {
    "connector_type": "connector", "size": "size", "material": "material", "color": "color",
    "item_form": "form", "quantity": "quantity",
}


class Realiser(Protocol):
    def realise(self, acts: tuple[A.DialogueAct, ...], rng: random.Random) -> str:
        """One message saying every act, in order."""
        ...


Phrasing = Literal["train", "eval"]
PHRASINGS: tuple[Phrasing, ...] = ("train", "eval")
_T = TypeVar("_T")
_phrasing: contextvars.ContextVar[Phrasing] = contextvars.ContextVar("phrasing", default="train")


def phrasing_options(options: Sequence[_T], phrasing: Phrasing) -> Sequence[_T]:
    """The half of ``options`` that belongs to ``phrasing`` (train: even positions, eval: odd)."""
    return options[PHRASINGS.index(phrasing)::2]


def pick(rng: random.Random, options: Sequence[_T]) -> _T:
    """One of ``options`` from the phrasing set of the realiser now running (train by default)."""
    return rng.choice(phrasing_options(options, _phrasing.get()))


@dataclass(frozen=True)
class EpisodeContext:
    """What a per-episode realiser is given.

    ``history()`` is the conversation the shopper has seen so far (the agent's messages and its
    own, as ``{"role", "content"}``), including a question being asked through ``ask_user``.
    ``hidden_goal()`` is the episode's hidden goal as JSON data, for checks in code only (what
    a message must not say): it must never reach a model's prompt or the agent.
    """

    key: tuple[Any, ...]  # (env_id, d, seed, secret): seeds the realiser's own random streams
    env_id: str
    difficulty: int
    p_noise: float
    catalog: Catalog
    history: Callable[[], list[dict[str, str]]]
    hidden_goal: Callable[[], Any]


class RealiserFactory(Protocol):
    def for_episode(self, context: EpisodeContext) -> Realiser:
        """The realiser of one episode."""
        ...


REDRAWS = 6  # phrasings tried per act to avoid a sentence the message already has
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def sentences(text: str) -> list[str]:
    """The sentences of a message (split after . ! ? followed by a space)."""
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def attribute_word(attribute: str | None) -> str:
    """How a shopper calls an attribute ("connector"); "option" for one without a word."""
    return ATTRIBUTE_WORDS.get(attribute or "", "option")


def _join(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _item_text(item: A.RequestedItem, rng: random.Random) -> str:
    text = item.phrase
    if item.quantity and item.quantity > 1:
        text = pick(rng, ["{q} of {p}", "{q}x {p}", "{p} (x{q})", "{q} units of {p}"]).format(q=item.quantity, p=text)
    if item.variant:
        attribute, value = item.variant
        text += pick(rng, [" in {v}", " ({v})", ", the {v} one", " in the {v} {w}"]).format(v=value, w=attribute_word(attribute))
    return text


@dataclass(frozen=True)
class ActTemplates:
    """How one family of dialogue acts is phrased: which acts, their text, and the values noise spares.

    An environment's registry spec names the ``ActTemplates`` of its simulated user's acts
    (``templates="module:NAME"``); :class:`TemplateRealiser` dispatches on them.
    """

    acts: type | UnionType
    text: Callable[[Any, random.Random], str]
    protected: Callable[[Any], tuple[str, ...]] = lambda act: ()


class TemplateRealiser:
    """Templates with several phrasings per act (from one phrasing set), plus typo/abbreviation/slang noise."""

    def __init__(self, p_noise: float = 0.0, phrasing: Phrasing = "train") -> None:
        if phrasing not in PHRASINGS:
            raise ValueError(f"phrasing must be one of {PHRASINGS}, got {phrasing!r}")
        self.p_noise = p_noise
        self.phrasing = phrasing

    def realise(self, acts: tuple[A.DialogueAct, ...], rng: random.Random) -> str:
        """Phrase each act, never repeating a sentence within the message (another phrasing is
        drawn, and a filler sentence that still repeats is left out), then add the message's noise."""
        token = _phrasing.set(self.phrasing)
        try:
            return self._realise(acts, rng)
        finally:
            _phrasing.reset(token)

    def record(self) -> dict[str, Any] | None:
        """What an episode record notes about this shopper, for replay (None: the default train set)."""
        return None if self.phrasing == "train" else {"realiser": "template", "phrasing": self.phrasing}

    def _realise(self, acts: tuple[A.DialogueAct, ...], rng: random.Random) -> str:
        said: set[str] = set()
        parts: list[str] = []
        for act in acts:
            phrase = templates_for(act).text
            for _ in range(REDRAWS):
                split = sentences(phrase(act, rng))
                if not said or not any(s.lower() in said for s in split):
                    break
            fresh = [s for s in split if s.lower() not in said] if said else split
            said.update(s.lower() for s in fresh)
            parts.append(" ".join(fresh))
        return add_noise(" ".join(p for p in parts if p), self.p_noise, rng, protected_values(acts))


@dataclass(frozen=True)
class TemplateShopper:
    """The template realiser per episode: noise at the episode's ``p_noise``, phrasings from ``phrasing``."""

    phrasing: Phrasing = "train"

    def for_episode(self, context: EpisodeContext) -> TemplateRealiser:
        return TemplateRealiser(context.p_noise, self.phrasing)


def protected_values(acts: Iterable[A.DialogueAct]) -> tuple[str, ...]:
    """The values the acts must convey verbatim (noise spares them; an LLM message must keep them)."""
    return tuple(v for act in acts for v in templates_for(act).protected(act))


def templates_for(act: Any) -> ActTemplates:
    """The templates that phrase ``act``: the shared ones, or those of a registered environment."""
    global _dispatch_specs
    specs = env_specs()
    if specs is not _dispatch_specs:  # the registry changed: rebuild the dispatch
        _dispatch.clear()
        _dispatch_specs = specs
    found = _dispatch.get(type(act))
    if found is None:
        names = dict.fromkeys(spec.templates for spec in specs if spec.templates)
        found = next((t for t in (COMMON_TEMPLATES, *map(load, names)) if isinstance(act, t.acts)), None)
        if found is None:
            raise TypeError(f"no template for dialogue act {type(act).__name__}")
        _dispatch[type(act)] = found
    return found


_dispatch: dict[type, ActTemplates] = {}  # act type -> its templates, for the registry as of _dispatch_specs
_dispatch_specs: tuple[Any, ...] = ()


def _common_text(act: A.Acknowledge | A.GiveUp, rng: random.Random) -> str:
    """Acts every environment's user may say."""
    if isinstance(act, A.Acknowledge):
        return pick(rng, ["Ok.", "Sounds good.", "Alright, thanks."])
    return pick(rng, ["This is taking too long. Never mind, I'll do it myself.",
                       "Forget it, I'll shop somewhere else.", "I give up, bye."])


def _cart_text(act: A.CartAct, rng: random.Random) -> str:
    """Templates for the CART acts."""
    if isinstance(act, A.RequestItems):
        items = _join([_item_text(i, rng) for i in act.items])
        text = pick(rng, [
            "Hi! Could you add {items} to my cart?", "Hello, I'd like to buy {items}.",
            "Hey, please put {items} in my cart.", "I need {items}. Can you add them to my cart?",
            "Hi there, I'm shopping for {items} - can you set up my cart?",
        ]).format(items=items)
        if act.confirm_first:
            text += " " + pick(rng, ["Please check with me before you finish.",
                                      "Let me confirm the cart before you're done.",
                                      "Show me the cart before wrapping up, please."])
        return text
    if isinstance(act, A.Inform):
        return " ".join(_fact_text(f, rng) for f in act.facts)
    if isinstance(act, A.StockOutAlternative):
        return pick(rng, [
            "Oh no. Then {alt} would work instead.", "That's a shame - I'll take {alt} instead then.",
            "Ok, in that case please get {alt} instead.",
        ]).format(alt=act.alternative)
    if isinstance(act, A.CartCorrection):
        return " ".join(_issue_text(i, rng) for i in act.issues)
    if isinstance(act, A.Confirm):
        return pick(rng, ["Yes, that's everything. Thanks!", "Looks right to me, go ahead.",
                           "Perfect, that's exactly what I wanted."])
    return pick(rng, ["Sorry, I'm not sure what you mean. I just need the items I asked for.",
                       "Hm? I only want what I mentioned.", "I don't follow - can you just sort out my cart?"])


def _journey_text(act: A.JourneyAct, rng: random.Random) -> str:
    """Templates for the JOURNEY acts: a lead, then the intent's own (already realised) request."""
    if isinstance(act, A.OpenJourney):
        lead = pick(rng, ["I have {n} things today. First:", "Hi, a few things ({n}) today - let's start here:",
                           "Hello! I've got {n} requests. To begin with:"]).format(n=act.count)
    elif isinstance(act, A.NextIntent):
        lead = pick(rng, ["Thanks! Also:", "Great, thank you. Next thing:", "Perfect. One more thing:",
                           "Thanks. Another thing:"])
    elif isinstance(act, A.InterruptIntent):
        lead = pick(rng, ["Oh wait, before that - something more urgent:", "Sorry, quick interruption first:",
                           "Hold on, let's do this first:"])
    else:
        lead = pick(rng, ["Thanks! Now back to what I asked before:", "Great. Back to my earlier request:",
                           "OK, returning to the first thing:"])
    return f"{lead} {act.request}"


def _fact_text(fact: A.Fact, rng: random.Random) -> str:
    word = attribute_word(fact.attribute)
    if fact.value == "any":
        if fact.attribute == "quantity":
            return pick(rng, ["Just one of {p}.", "Only one of {p}, please."]).format(p=fact.phrase)
        return pick(rng, ["Any {w} is fine for {p}.", "I don't mind which {w} for {p}."]).format(w=word, p=fact.phrase)
    if fact.attribute == "quantity":
        template = (["I already said: {v} of {p}.", "Like I said, {v} of {p}."] if fact.repeated
                    else ["I need {v} of {p}.", "{v} of {p}, please.", "Make it {v} for {p}."])
    else:
        template = (["I already told you, {p} in {v}.", "As I said: {v} for {p}."] if fact.repeated
                    else ["For {p}, {v} please.", "I need {p} in {v}.", "The {v} {w} for {p}."])
    return pick(rng, template).format(v=fact.value, p=fact.phrase, w=word)


def _issue_text(issue: A.Issue, rng: random.Random) -> str:
    templates = {
        "wrong_variant": ["That's the {got} one of {p}, I need {wanted}.", "Wrong one - {p} should be {wanted}, not {got}."],
        "too_many": ["I only need {wanted} of {p}, not {got}.", "Too many of {p} - {wanted} is enough."],
        "too_few": ["I need {wanted} of {p}, the cart has {got}.", "Please make it {wanted} of {p}."],
        "unwanted": ["I didn't ask for {p}, please remove it.", "Why is {p} in my cart? I don't want it."],
        "missing": ["You're still missing {p}.", "{p} isn't in the cart yet."],
    }
    return pick(rng, templates[issue.kind]).format(p=issue.phrase, wanted=issue.wanted, got=issue.got)


def _account_text(act: A.AccountAct, rng: random.Random) -> str:
    """Templates for the account acts (RETURN, STATUS, POLICY)."""
    if isinstance(act, A.RequestReturn):
        text = pick(rng, ["Hi, I'd like to return {item}.", "Hello, I want to send back {item}.",
                           "Hey, can you help me return {item}?", "I need to return {item}, please."]).format(item=act.item)
        if act.reason:
            text += " " + pick(rng, ["The problem: {r}.", "Reason: {r}.", "{R}."]).format(r=act.reason, R=act.reason[0].upper() + act.reason[1:])
        if act.replacement:
            noun, requirements = act.replacement
            wanted = " ".join(part for part in (_another(noun), _requirements_text(requirements, rng)) if part)
            text += " " + pick(rng, ["I'd also like a replacement: {x}.", "Could you also recommend {x} instead?",
                                      "And please suggest a replacement - {x}."]).format(x=wanted)
        if act.confirm_first:
            text += " " + pick(rng, ["Please check with me before you start the return.",
                                      "Ask me to confirm before starting anything.",
                                      "Don't start the return until I confirm, please."])
        return text
    if isinstance(act, A.AskOrderStatus):
        text = pick(rng, ["Hi, where is {o}?", "Hello, what's the status of {o}?", "Can you check on {o} for me?",
                           "Hey, any news on {o}?"]).format(o=act.order)
        if act.want_eta:
            text += " " + pick(rng, ["When will it arrive?", "And when should I expect it?",
                                      "What's the expected delivery date?"])
        return text
    if isinstance(act, A.AskPolicy):
        facts = " ".join(act.facts)
        lead = pick(rng, ["Hi, a question about your policy.", "Hello!", "Quick question.", "Hi there."])
        return " ".join(part for part in (lead, facts, act.question) if part)
    if isinstance(act, A.IdentifyItem):
        return pick(rng, ["I mean {i}.", "It's {i}.", "Sorry, I meant {i}."]).format(i=act.item)
    if isinstance(act, A.ExplainReason):
        return pick(rng, ["The reason: {r}.", "Well, {r}.", "Because {r}."]).format(r=act.reason)
    if isinstance(act, A.CheckMyAccount):
        return pick(rng, ["It should all be in my account - can you check?", "You can see that in my account, right?",
                           "I already told you what I know; please look at my orders."])
    if isinstance(act, A.WrongItem):
        return pick(rng, ["That's not the one! I meant {w}.", "Wrong item - I was talking about {w}.",
                           "No, not that one. I mean {w}."]).format(w=act.wanted)
    raise TypeError(f"no template for dialogue act {type(act).__name__}")


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


def _requirements_text(pairs: Iterable[tuple[str, str]], rng: random.Random) -> str:
    return _join([pick(rng, _REQUIREMENT_PHRASES[f]).replace("{v}", v) for f, v in pairs])


def _a(noun: str) -> str:
    return indefinite(noun)


def _another(noun: str) -> str:
    """"another keyboard", "another pair of running shoes"."""
    phrase = indefinite(noun)
    if phrase.startswith("some "):
        return "other " + phrase[5:]
    return "another " + phrase.split(" ", 1)[1]


def _recommend_text(act: A.RecommendAct, rng: random.Random) -> str:
    """Templates for the recommendation acts (PD, SUB, BUNDLE)."""
    if isinstance(act, A.RequestProducts):
        reqs = (" " + _requirements_text(act.requirements, rng)) if act.requirements else ""
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
            text += " " + pick(rng, ["I need it {r}.", "It has to be {r}.", "Ideally {r}."]).replace(
                "{r}", _requirements_text(act.requirements, rng))
        return text
    if isinstance(act, A.RequestBundle):
        text = pick(rng, ["Hi! I'm {p} and need {l}.", "Hello, I'm {p}. Could you put together {l} for me?",
                           "Hey, I'm {p} - I need {l}. What would you recommend?"])
        text = text.replace("{p}", act.project).replace("{l}", _join([_a(n) for n in act.nouns]))
        if act.budget:
            text += " " + pick(rng, ["My total budget is ${b}.", "I can spend ${b} in total.",
                                      "Everything together should cost at most ${b}."]).replace("{b}", act.budget)
        by_noun: dict[str, list[tuple[str, str]]] = {}
        for noun, f, v in act.item_requirements:
            by_noun.setdefault(noun, []).append((f, v))
        for noun, pairs in by_noun.items():
            text += " " + pick(rng, ["The {n} should be {r}.", "For the {n}: {r}, please."]).replace(
                "{n}", spoken_noun(noun)).replace("{r}", _requirements_text(pairs, rng))
        return text
    if isinstance(act, A.StateRequirements):
        parts: list[str] = []
        if act.stated:
            parts.append(pick(rng, ["Sure - I'd like it {r}.", "Oh right: {r}.", "Good question. {R}."]).replace(
                "{r}", _requirements_text(act.stated, rng)).replace("{R}", _capital(_requirements_text(act.stated, rng))))
        if act.repeated:
            parts.append(pick(rng, ["As I said, {r}.", "I already told you: {r}."]).replace(
                "{r}", _requirements_text(act.repeated, rng)))
        if act.no_preference:
            parts.append(pick(rng, ["No preference on {t}.", "I don't mind about {t}."]).replace(
                "{t}", _join(list(act.no_preference))))
        return " ".join(parts) or pick(rng, ["That's all I need.", "Nothing else, that's everything."])
    if isinstance(act, A.ChangeRequirement):
        return pick(rng, ["Actually, I changed my mind: I'd like it {r} instead.", "Oh, one change - make that {r}.",
                           "Sorry, an update: the {n} should be {r}."]).replace(
            "{n}", spoken_noun(act.noun)).replace("{r}", _requirements_text([act.requirement], rng))
    if isinstance(act, A.SoldOut):
        return pick(rng, ["Hm, the {p} is sold out now.", "That one is sold out now - the {p} isn't available anymore.",
                           "I just checked: the {p} is out of stock."]).replace("{p}", act.phrase)
    if isinstance(act, A.LooksGood):
        return pick(rng, ["The {p} looks good.", "I like the {p}."]).replace("{p}", act.phrase)
    if isinstance(act, A.MissesRequirement) and act.requirement is None:
        return pick(rng, ["The {p} isn't quite what I'm looking for.", "Hm, not the {p}."]).replace("{p}", act.phrase)
    if isinstance(act, A.MissesRequirement) and act.requirement is not None:
        return pick(rng, ["The {p} doesn't work for me - I need it {r}.", "Not the {p}: it has to be {r}."]).replace(
            "{p}", act.phrase).replace("{r}", _requirements_text([act.requirement], rng))
    if isinstance(act, A.NotNeeded):
        return pick(rng, ["I don't need the {p} for this.", "The {p} isn't on my list."]).replace("{p}", act.phrase)
    if isinstance(act, A.UnclearQuestion):
        return pick(rng, ["Sorry, I'm not sure what you mean. I just want good recommendations.",
                           "Hm? I don't follow.", "I'm not sure what you're asking - what do you suggest?"])
    raise TypeError(f"no template for dialogue act {type(act).__name__}")


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


COMMON_TEMPLATES = ActTemplates(acts=A.Acknowledge | A.GiveUp, text=_common_text)
CART_TEMPLATES = ActTemplates(acts=A.CartAct, text=_cart_text, protected=A.cart_values)
JOURNEY_TEMPLATES = ActTemplates(acts=A.JourneyAct, text=_journey_text, protected=A.journey_values)
ACCOUNT_TEMPLATES = ActTemplates(acts=A.AccountAct, text=_account_text, protected=A.account_values)
RECOMMEND_TEMPLATES = ActTemplates(acts=A.RecommendAct, text=_recommend_text, protected=A.recommend_values)
