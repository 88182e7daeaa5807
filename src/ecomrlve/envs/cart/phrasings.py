"""How the CART shopper says its acts: phrasings per act (two disjoint halves, see ``pick``)."""

from __future__ import annotations

import random

from ecomrlve.envs.cart import acts as A
from ecomrlve.user.realiser import ActTemplates, join_words, pick

ATTRIBUTE_WORDS = {
    "connector_type": "connector", "size": "size", "material": "material", "color": "color",
    "item_form": "form", "quantity": "quantity",
}


def attribute_word(attribute: str | None) -> str:
    """How a shopper calls an attribute ("connector"); "option" for one without a word."""
    return ATTRIBUTE_WORDS.get(attribute or "", "option")


def _item_text(item: A.RequestedItem, rng: random.Random) -> str:
    text = item.phrase
    if item.quantity and item.quantity > 1:
        text = pick(rng, ["{q} of {p}", "{q}x {p}", "{p} (x{q})", "{q} units of {p}"]).format(q=item.quantity, p=text)
    elif item.several:  # more than one, the count withheld: never "the X" alone, which says one
        before, after = A.SEVERAL_BEFORE, A.SEVERAL_AFTER
        text = pick(rng, [f"{before[0]} {{p}}", f"{{p}} {after[0]}", f"{{p}} {after[1]}", f"{before[1]} {{p}}"]).format(p=text)
    if item.variant:
        attribute, value = item.variant
        text += pick(rng, [" in {v}", " ({v})", ", the {v} one", " in the {v} {w}"]).format(v=value, w=attribute_word(attribute))
    return text


def _cart_text(act: A.CartAct, rng: random.Random) -> str:
    """Templates for the CART acts."""
    if isinstance(act, A.RequestItems):
        items = join_words([_item_text(i, rng) for i in act.items])
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
    if isinstance(act, A.NothingElse):
        return pick(rng, ["That's everything, just the items I listed.", "No, nothing else - just those.",
                          "Just what I asked for, thanks.", "That's all I need."])
    return pick(rng, ["Sorry, I'm not sure what you mean. I just need the items I asked for.",
                       "Hm? I only want what I mentioned.", "I don't follow - can you just sort out my cart?"])


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


CART_TEMPLATES = ActTemplates(acts=A.CartAct, text=_cart_text, protected=A.cart_values)
