"""The shopper's understanding: what an agent message asks, read from its words and the values in play.

Every shopper reads the agent the same way: :func:`understand` turns one message into a
:class:`Reading` (is it a question or a request; which requirement topics it asks about, and of which
items; whether it asks for any further requirement, for the go-ahead, which order or item is meant, or
why; whether it announces a stock-out), and each family's shopper reacts to the reading, never to raw
words. A reading comes from two sources:

* **cues**: phrases that ask about a topic directly or indirectly ("budget", "how much ... spend",
  "what size do you wear", "what device will you use it with", "when do you need it by", "a favourite
  make"), and the rule layer for the other acts ("Can I finalize it?", "Tell me a bit more about what
  you need.", "Do you remember roughly when you ordered it?");
* **values in play** (:class:`InPlay`): a message naming two values of one topic asks about that
  topic ("XS, M or XXL?", "Stainless Steel, Ceramic or Wood?"); one value named in a question asks about
  it ("Do you want it in ceramic?") unless the message asks for the go-ahead; two of the customer's order
  dates ask which order is meant.

The rule layer reads the go-ahead only in the sentences that ask ("Happy to help you find sheets!" before a
question is a greeting) and not in a clause that asks what to do ("Where should I start?"); topics, values and
which order likewise ("Delivery is free this week. Any colour you'd like?" asks the colour alone). Why the
customer returns the item is asked only by a clause that asks for the cause ("why", "what's wrong") or, asking
nothing else, about a fault ("Is it faulty?"): not by one that waives it ("no need to say why"), states
("Sorry it's broken, which order?"), or where the fault names the item a which-order or go-ahead question is
about ("Which order has the problem?", "Shall I return the faulty one?"), nor a go-ahead that names the reason as given
or as what the step records ("Can I complete the return with the reason you gave?", "OK to file it, citing that
reason?"). "How much" that weighs a topic ("How much do reviews matter?", "How much of a priority is delivery?")
asks that topic, no amount to buy. A message that only mentions a topic
does not ask it, so the shopper keeps what it withholds. "Which" is asked
only about the customer's orders: with orders in play, a question that names an ordered product, a month,
the order, or refers to the line ("How recent was it?", "What did it cost?") asks which line is meant, and
no requirement; STATUS and RETURN answer a question about the line exactly when the reading says so.

A sentence that only tells ("Please be aware that delivery takes 5 days", "Let me know if you change your mind
later") asks nothing; the verb of a go-ahead ("Want me to pay for it now?") and the agent's own next step ("before
I pay") name no topic; a problem supposed of a choice ("Would it be an issue if ...?") or a purpose ("..., so it
doesn't end up too small?") asks no reason. An item is named by its id, model, brand or type, by another word for
its type where that word ends its noun phrase ("What size coat?"), or by its place ("the second item").

What a message asks is grounded in its words, never in a value merely said: a sentence without a question mark asks
only in a question's shape ("What a lovely choice, the olive one ..." and "When an item is faulty we ..." tell; "I'd
need your size", "colour for the hoodie please" and "the connector you need is which one" ask), and a topic or value
counts only in the clauses that ask, not in a circumstance beside them ("Since your old pan was from Culina, what
material ...?", "..., given the black ones sold out") or a fact told before or after the question in the same sentence
("The last one arrived late, what colour would you like?", "Would you like the black one, which ships tomorrow?").
"A particular X" asks about X, never openly (an open reading makes the shopper say every withheld value).

Deterministic and offline: plain string searches over a normalised message (a few tens of microseconds;
``benchmarks/bench_understanding.py`` measures the p99 and the bank in ``tests/data/understanding``).
The reading never holds a value: a shopper reveals only what the reading asks for, so a message that
asks nothing, or asks about topic X, gets nothing about topic Y.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from ecomrlve.catalog.embedders import ASSETS
from ecomrlve.catalog.taxonomy import CATEGORICAL_ATTRIBUTES
from ecomrlve.user import intent_model
from ecomrlve.user.dialogue import ItemNames, referenced
from ecomrlve.user.text import APOSTROPHE as _APOSTROPHE
from ecomrlve.user.text import PRICE, contains_word, one_typo, split_words
from ecomrlve.user.text import WORD as _WORD

_VOCABULARY = ASSETS / "minilm-m2v" / "tokenizer.json"
#: The requirement topics a message can ask about (recommendation fields, CART variant attributes, quantity).
TOPICS = ("price", "brand", "rating", "shipping", "color", "size", "material", "connector", "form", "wattage",
          "screen", "weight", "quantity", "popularity", "similar")
#: A generic "which version?" that names no attribute.
VARIANT = "variant"
#: The topic of each variant attribute (a catalog column) and of each recommendation requirement field.
TOPIC_OF_ATTRIBUTE = {"connector_type": "connector", "item_form": "form", "color": "color", "size": "size",
                      "material": "material", "quantity": "quantity", "brand": "brand", "price_max": "price",
                      "price_min": "price", "rating_min": "rating", "ship_days_max": "shipping",
                      "wattage_min": "wattage", "screen_size_min": "screen", "weight_max": "weight"}

# -- the cue lexicon (phrases in normalised form: lower case, words of letters and digits) ----------------

#: Phrases that ask about a topic wherever they occur in a question (a trailing "s" also matches).
_TOPIC_CUES: dict[str, tuple[str, ...]] = {
    "price": ("whats the damage", "cheapest", "highest youd go", "highest you would go", "most youd go", "how high would you go", "keep it under", "keep them under", "keep it below", "stay under", "stay below", "budget", "price", "pricing", "spend", "spending", "cost", "expensive", "cheap", "cheaper", "afford",
              "pay", "paying", "ballpark", "dollar", "buck", "money", "price range", "go over", "go above",
              "quid", "figure", "maximum you", "stay within", "how much are you", "how much were you", "how much you",
              "putting towards", "upper limit", "price point", "price ceiling", "spending limit", "outlay", "splurge",
              "splurging", "affordable", "fork out", "shell out", "premium end", "entry level", "high end", "stretch to",
              "invest", "how much is too much", "how much would be too much", "how much are we looking at",
              "how much are we talking", "what sum", "which sum", "sort of sum", "kind of sum", "sum of money", "allocate", "allocating",
              # what the customer parts with or has in mind as a sum ("How much gold will you part with?", "the
              # amount you had in mind")
              "to part with", "you part with", "youd part with", "willing to put down", "happy to put down", "put down on a", "ready to give", "amount you are ready", "amount youre ready", "amount you had in mind", "amount you have in mind", "amount youd", "what amount",
              # money in slang or in an old register ("brand, and how much coin?")
              "how much coin", "how much cash", "how much dosh", "how much dough", "how much moolah",
              # ... or as what the customer's wallet, purse or pocket holds or gives up ("What's in your pocket for
              # the speaker?", "or is the purse more generous?", "the sum you are prepared to expend")
              "your wallet", "the wallet", "your purse", "the purse", "in your pocket for", "expend", "maximum sum",
              # a spending limit asked as the customer's limit ("What's your limit on the monitor?")
              "whats your limit", "your limit on", "your limit for",
              # money dropped on it, in slang ("What are you willing to drop on a pan?")
              "willing to drop", "happy to drop", "ready to drop", "prepared to drop", "want to drop", "like to drop",
              "looking to drop"),
    "brand": ("brand", "manufacturer", "maker", "name on the", "name upon the", "favourite make", "favorite make", "preferred make",
              "particular make", "which make", "what make", "any make", "who makes", "who made", "any label", "brand name",
              "make of", "manufactured by", "who manufactures", "the make", "a make",
              "which mark", "what mark",
              "a label", "which label", "loyal to", "company", "any names", "names you", "buy from", "buy your",
              "other make", "other makes"),
    "rating": ("rating", "rated", "star", "review", "reviewed", "well reviewed", "stars", "customer score", "scores",
               "feedback", "rate highly", "rate it", "buyers say", "customers say", "people say", "reviewers",
               "evaluation by", "evaluations by", "by other customers", "from other customers", "other buyers",
               "other purchasers", "other shoppers", "opinions of other"),
    "shipping": ("shipping", "delivery", "deliver", "delivered", "delivering", "ship", "arrive", "arrival", "how soon",
                 "how fast", "how quickly", "need it by", "by when", "deadline", "in time", "within the week",
                 "by a certain date", "when do you need", "wait a week", "how long can you wait", "dispatch",
                 "it quickly", "them quickly", "need it quick", "need them quick", "want it quick", "want them quick", "to wait", "wait for it", "wait for them", "it fast", "them fast", "it soon", "them soon",
                 "be with you", "get to you", "next day", "same day", "express", "overnight", "reach you", "it faster", "them faster", "it sooner", "them sooner", "it quicker", "them quicker", "asap", "urgent",
                 "urgently", "in a hurry", "rush", "despatch", "postage", "turnaround", "lead time",
                 "timeframe", "time frame", "get here", "courier", "eta", "needed by", "in your hands", "in a hurry",
                 # a comparative offered against another ("cheaper or faster?")
                 "or faster", "faster or", "or quicker", "quicker or",
                 # a date to have it by, in formal words ("the latest date by which the item must be received")
                 "latest date", "date by which", "must be received", "be received by", "the latest it can",
                 # the door it reaches and how fast it gets there, in old or casual words ("When must it reach thy
                 # door?", "it gets to ya quick": "ya" read as "you", "Want it shipped fast?"; not "at your door", "sent
                 # fast" or a bare "gets to you": with them a blind batch leaked 6 values more, aggregates only)
                 "reach your door", "gets to you quick", "gets to you fast", "gets to you soon", "shipped fast",
                 "shipped quick", "shipped quickly",
                 # in Spanish ("You need the lamp rápido?")
                 "rapido"),
    "color": ("color", "colour", "shade", "hue", "colour scheme", "color scheme", "colourway", "colorway", "tone", "palette"),
    "size": ("size", "sizing", "how big", "measurements", "fits you", "fit you", "you wear", "do you wear",
             "usually wear", "dimensions", "how large", "what fit", "which fit", "your foot", "your feet", "shoe number",
             "kind of fit", "sort of fit", "type of fit", "fit do you", "fit would you", "snug", "loose fit", "roomy",
             "baggy", "you are wearing", "youre wearing", "are you wearing",
             # the bed that bedding is for ("What bed are they for?")
             "what bed", "which bed", "kind of bed", "sort of bed", "type of bed", "bed size", "size bed"),
    "material": ("material", "made of", "made from", "made out of", "fabric", "what is it made", "fibres", "fibers",
                 "what stuff", "which stuff",
                 "synthetic", "metal", "wooden"),
    "connector": ("connector", "connection", "connect", "port", "plug", "cable type", "hook it up", "hooking it up", "hook up", "hooking up", "with cable", "without cable", "without a cable", "interface", "wired",
                  "wireless", "device", "phone", "telephone", "iphone", "android", "laptop", "computer", "charging with",
                  "charge with", "plug it into", "which end", "what end", "type of end", "kind of end", "mac", "macbook",
                  "cordless", "corded", "connecting", "hook up", "hook it up", "hook them up",
                  # a bare "usb" offered as a choice ("bluetooth or usb?")
                  "or usb", "usb or",
                  "pc", "ipad", "your tablet",
                  # what the cable goes on ("the instrument to which the cable is to be attached")
                  "be attached", "attach it to", "attach them to"),
    "form": ("form", "formula", "texture", "consistency"),
    "wattage": ("wattage", "watt", "power output", "powerful", "how bright", "brightness", "very bright",
                "be bright", "bright enough", "brighter", "really bright", "quite bright", "how dim", "too dim",
                # a speaker's power said as its loudness
                "how loud", "loud enough", "louder", "very loud", "how powerful",
                # the light a lamp gives ("How much light does your corner need?")
                "how much light",
                # a light's strength offered as a choice ("bright or soft?")
                "bright or soft", "soft or bright", "bright or dim", "dim or bright", "strong light", "how much power"),
    "screen": ("screen", "display size", "inch", "inches", "how big a display", "size screen", "screen size", "diagonal"),
    "weight": ("weight", "heavy", "weigh", "lightweight", "be light", "light enough", "lighter", "how light", "heavier",
               "easy to lift", "easy to carry", "light to carry", "portable", "heft", "hefty", "kilo", "kilogram",
               # what the customer can lift ("Any lifting restrictions we should be aware of?", "hard to lift?")
               "lifting", "to lift"),
    # soft preferences a ranking may weigh (no requirement states them)
    "popularity": ("popular", "popularity", "bestseller", "best seller", "best selling", "well known"),
    "similar": ("similar", "closest", "close to", "same as"),
    "quantity": ("how many", "quantity", "quantities", "qty", "number of", "units", "how much of", "just the one", "just one",
                 "more than one", "several", "of each", "a couple", "multiple", "how much do you need", "will one do",
                 "one be enough", "one or two", "need a few", "want a few", "only one", "two of them", "two of those",
                 "two of these", "three of them", "pack of", "just 1", "only 1", "whole team", "for everyone",
                 "how many people", "how many pieces"),
}
#: "Use the keyboard with" asks about the connector only when "with" follows; kept as one phrase above.
_USE_WITH = re.compile(r" (?:use|using|pair|pairing) (?:the|it|this|that|them|these) (?:[a-z0-9]+ ){0,3}with |"
                       r" (?:pair|pairing) (?:it|this|that|them|these|those) (?:up )?to |"
                       r" plug(?:s|ging|ged)? (?:(?:it|them|this|that|these|the|your)(?: [a-z0-9]+){0,2} )?in(?:to)? ")
#: "How much do reviews matter?", "how much do you care about delivery?", "how much of a priority is price?", "how
#: much the brand counts for you", "how much do you trust the stars?": "how much" weighs how important something is,
#: it asks no amount to buy.
_DEGREE = re.compile(r" how much (?:(?:(?:do|does|did|would|will|should|could|can|is|are) )?(?:[a-z0-9]+ ){0,4}?(?:matter|matters|"
                     r"care|cares|mind|value|count|counts|weigh|weighs|prioriti[sz]e|bother|bothers|concern|concerns|"
                     r"affect|affects|influence|influences|sway|sways|trust|trusts|rely|relies|depend|depends|important|"
                     r"essential)|of (?:a|an) (?:priority|concern|factor|issue|difference|"
                     r"deal|dealbreaker|deal breaker|must)|(?:importance|weight|emphasis|stock) )")
#: "How much weight do you put on reviews?": the weight given to a topic, not the item's weight.
_WEIGHT_GIVEN = re.compile(r" (?:weight|emphasis|importance) (?=(?:do|does|would|will|should|can) (?:you )?(?:put|give|"
                           r"place|attach|lay|set) )|"
                           # "How heavily do reviews weigh on your choice?", "Do reviews figure in your decision?": what
                           # counts in a choice, not the item's weight or a sum
                           r" how (?:heavily|much)(?= (?:[a-z0-9]+ ){0,8}?weighs? (?:heavily |much )?(?:on|upon|in|into) "
                           r"(?:your|you|the) (?:choice|decision|mind|thinking|pick|purchase|buying)\b)|"
                           r" (?:weighs?|figures?|factors?) (?:heavily |much )?(?:on|upon|in|into) (?=(?:your|you|the) "
                           r"(?:choice|decision|mind|"
                           r"thinking|pick|purchase|buying)\b)")
#: A time to have it in ("within 7 days?", "in the next two weeks?"): the delivery asked.
_WITHIN_DAYS = re.compile(r" (?:within|in|inside) (?:the next |the coming )?(?:\d+|a|one|two|three|four|five|six|seven|ten|a few|a "
                          r"couple of) (?:business |working )?(?:days?|weeks?) ")
_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december")
#: "Do you need them here by Friday?", "Do you want them by the 20th?": a day to have it by asks the delivery time.
_DAY_WORDS = (r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|weekends|tomorrow|next|end|christmas|party|"
              r"event|trip|holiday|holidays|birthday|wedding|move|launch|[0-9]{1,2}(?:st|nd|rd|th)?|(?:"
              + "|".join(_MONTH_NAMES) + r") [0-9]{1,2})")
#: Also before any event the customer names ("Do you need it before the spring fair?", "'fore the weekend", "before we
#: dock on Friday") or for a time ("Do you need it for this weekend's shoot?").
_BY_DAY = re.compile(r" (?:here|there|arrive|arriving|delivered|(?:need|want|have|get|receive) (?:it|them|this|these|that|those)) "
                     r"(?:(?:by|before) (?:the |your |a |our )?" + _DAY_WORDS + r"|(?:before|fore) (?:the|your|our|this|next) [a-z]+|"
                     r"(?:by|before|fore) (?!(?:i|you)\b)(?:[a-z]+ ){1,3}(?:on |by )?(?:the )?" + _DAY_WORDS
                     + r"|for (?:this|next|the) (?:weekend|weekends|week|weeks|monday|tuesday|wednesday|thursday|friday|"
                     r"saturday|sunday|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays)|for (?:tomorrow|tonight|christmas)) ")
#: "Do you need it by a particular date?", "Is there a date you need it by?": a date to have it by asks the delivery
#: time (with no orders in play, where a date picks out an order).
_BY_DATE = re.compile(r" by (?:a |any |some |what |which |the |that |this )?(?:particular |specific |certain |set |fixed |given )?"
                      r"(?:date|day|deadline) |(?:date|day) (?:do|would|will|should|must) (?:you|it|they) (?:need|have|want|"
                      r"arrive|get)| (?:date|day|deadline) (?:you|it) (?:need|needs|must|should|has to)")
#: "A particular date", "any specific brand": "particular" then a noun that is no requirement in general ("any
#: particular needs?") names what is asked; it is no open question, though the noun be unknown.
_PARTICULAR_NOUN = re.compile(r" (?:a|any|some|the|one) (?:particular|specific|special|certain) (?!(?:needs?|requirements?|"
                              r"expectations?|look|feel|things?|features?|specs?|preferences?|wish(?:es)?|criteria|"
                              r"requests?|conditions?|must|way|use|purpose|reason|in|about|for|you|that|to)\b)[a-z]+ ")
#: "A few more details": more to be told, no amount to buy.
_FEW_MORE = re.compile(r" a (?:few|couple of|couple) (?:more )?(?:details|things|questions|bits|words|pointers|specifics|facts|"
                       r"notes|points|thoughts) ")
#: "Does it need to be particularly bright?": brightness asked with a degree word before "bright".
_BRIGHT = re.compile(r" (?:be|[a-z]+ly|very|quite|too|so|extra|super|pretty|fairly|enough|how) bright(?:er)? ")
#: The size cues that only say the item is worn ("what do you usually wear?"): another topic named is what they ask.
_WEAR = re.compile(r" (?:(?:do |are )?you (?:are )?)?(?:usually |normally |typically |generally )?wear(?:ing)? | fits? you ")
#: "How many watts" counts a unit of another topic, not units to buy.
#: A lamp's shade ("glass shade or metal?"), not a colour's.
_SHADE_PART = re.compile(r" (?:lamp|glass|fabric|linen|paper|metal|plastic|cotton|silk|drum|ceramic) shades? |"
                         r" shades?(?= (?:material|fabric)s? )|"  # "the shade material": the lampshade's
                         r" shades?(?= (?:made )?(?:of|in) (?:a |the )?(?:glass|fabric|linen|paper|metal|plastic|cotton|silk|"
                         r"ceramic) )")  # "a shade of glass or of linen"
#: Words of weight that weigh no item: "how much does the brand weigh for you?" (how much it matters), "the lighter gel
#: texture" (a form's feel), nor the verb after its subject ("How heavily should I weight review scores?"), nor a say in
#: a choice ("How much does the colour weigh in on your pick?").
#: ... nor "lighter" or "heavier" with a material or a colour as its example ("or something lighter like linen?", "lighter,
#: such as beige"): the example is what is asked.
_NOT_WEIGHT = re.compile(r" weigh(?:s|eth)? (?:for|with|on|upon|to) (?:you|your)\b|"
                         # a ship's or a boxer's weighing ("weigh anchor", "weigh it in and ring it up"): no weight asked
                         r" weigh(?:s|ed|ing)? (?:anchor|(?:it|them|this|that|these|those) in(?! (?:kg|kilos?|kilograms?|grams?|"
                         r"pounds?|lbs?|ounces?|oz)\b))| weigh(?:s|ed|ing)? in (?:on|with) | (?:i|we|you|they) weight | (?:light|lighter|lightweight)(?= (?:[a-z]+ )?(?:gel|cream|"
                         r"lotion|texture|formula|foam|spray|feel|scent|serum|oil|mist|consistency)s? )|"
                         r" (?:light|lighter|lightweight|heavier)(?= (?:like|such as|say|eg|e g) (?:"
                         + "|".join(sorted(v.lower() for t in ("material", "color") for v in CATEGORICAL_ATTRIBUTES[t]))
                         + r") )")
#: Words of a topic in an idiom or a remark that asks nothing of it: a reassurance that there is no hurry ("No flash
#: photography, and no rush: how much does the brand matter?"; not "In a rush, or no rush?"), a chess player's "time
#: trouble", a simile of a star ("a little like a stable star: cast iron or aluminium?"), "dead" as "quite" ("Two wee
#: things and we're dead on: ..."; not "Did it go dead on you?").
_IDLE_CUE = re.compile(r"(?:^|[,:;.!]\s*|\band\s+|\bbut\s+)no (?:rush|hurry)(?: at all)?(?=\s*[,:;.!]|\s+(?:and|but|so)\b)|"
                       r"\bin time (?:trouble|pressure)\b|\b(?:like|as) an? (?:[a-z]+ )?star\b(?! rating)|"
                       r"\b(?:we|were|we['\u2019]re|we are|all|you['\u2019]re|youre) dead (?:on|right|sorted|set|easy)\b", re.IGNORECASE)
#: "material" as an adjective ("a material consideration", "no material difference"): no topic of what it is made of.
_MATERIAL_ADJECTIVE = re.compile(r" material(?= (?:consideration|factor|difference|concern|issue|point|change|question|"
                                 r"impact|effect)s? )")
#: A device as the measure of a size ("gaming big or laptop-ish?", "a phone-sized screen"): no connector asked.
_DEVICE_SIZED = re.compile(r" (?:phone|laptop|tablet|tv|pc|computer|desktop)s? (?:ish|sized) ")
#: "a big display", "a larger monitor": the screen's size asked without the word "size".
_BIG_SCREEN = re.compile(r" (?:big|bigger|large|larger|compact|huge|small|smaller|wide|wider) (?:screen|display|monitor)s? ")
#: "How much power?", "how much juice?", "how much screen do you need?": the amount of a quality, no quantity.
_HOW_MUCH_OF = re.compile(r" how much (?:[a-z]+ )?(?:power|juice|screen|bright|brightness|light|volume|storage|space|room|battery|hefts?|"
                          r"weight|kilos?|kilograms?|kgs?|watts?|wattage|inch|inches) | how much of an? ")
#: A noun phrase that heads a question ("The stars of the reviews, how many is the least for you?").
_HEADING_PHRASE = r"(?:the|your) [a-z]+ (?:of|for|on) (?:the|your|its|this|that|these|those) [a-z]+"
#: "how many" of what the heading before it names ("The stars of the reviews, how many is enough?"): a count of that.
_HEADED_COUNT = re.compile(r" " + _HEADING_PHRASE + r" how many (?=(?:is|are|s|would|do|will|d|should)\b)")
#: "how much" after the topic it asks ("Your foot size how much?", "Screen size how much you need?"): no amount to buy,
#: no price.
_TOPIC_HOW_MUCH = re.compile(r" (?:size|sizes|wattage|watts|brightness|weight|foot|feet)(?: is| are| s)? how much(?: (?:do |would |will )?(?:you|ya|u))? ")
#: "How big is your budget?": the size of the budget, its price (no size asked).
_BIG_BUDGET = re.compile(r" how (?:big|large|small) (?:is |s |was |are |would be |will be )?(?:your |the |our |a )?(?:budget|"
                         r"price range|spend|spending limit|spending|outlay|wallet)s? |"
                         # "Small money or big money?": the size of the sum, its price
                         r" (?:big|bigger|large|larger|small|smaller|little|huge|tiny) (?:money|cash|budget|spend|sum|"
                         r"amount|bucks|dough|wallet)s? ")
#: "how heavy you figure you can handle", "I figure": the verb (to reckon), no figure of money named.
_FIGURE_VERB = re.compile(r" (?:you|ya|ye|yer|u|youd|i|id|we|wed|they|theyd|d)(?: would| do| did| might| ll)? figured? |"
                          r" figured? (?:out|on|that|it|youd|you|ill|id)\b")
#: "Leather or mesh, which fits your grid?": the option that suits a plan or a style, no size (not "which fits you").
_WHICH_SUITS = re.compile(r" (?:which|what) (?:one )?(?:fits|fit) (?:in with |with )?(?:your|the|our|my) (?!(?:feet|foot|"
                          r"size|body|frame|build|waist|height|room|space|desk|bed|car)\b)")
#: "Which number": a number picked (a shoe's, beside a word for wearing it), not a count.
_NUMBER = re.compile(r" (?:which|what) number(?: of)? ")
#: "The number of your foot": a size, not a count.
_NUMBER_OF_YOUR = re.compile(" number of your ")
#: "I'll narrow it down to a couple of lamps": how many the agent will show, no amount to buy.
#: "There are a couple of versions", "it comes in several colours": how many options there are, no amount to buy.
_OWN_PICKS = re.compile(r" (?:down to|show you|pull up|pick out|find you|send you|suggest|recommend|theres|there is|there are|"
                        r"comes in|come in|we have|we stock|we carry|available in|i found|ive found|ive got) (?:a couple|"
                        r"a few|several|two|three|multiple)(?: of)? ")
_COUNTED_SCREEN = re.compile(r" how many (?:[a-z]+ )?(?:screens|displays|monitors) ")
_COUNTED_UNIT = re.compile(r" how many (?:watt|inch|inche|star|day|dollar|buck|pound|lb|kg|kilo|kilogram|ounce)s? |"
                           # the unit named first ("Watt how many you need?", "kilo how many?")
                           r" (?:watt|inch|inche|star|kg|kilo|kilogram)s? how many |"
                           # money in any currency's name ("how many quid you wanna spend", "how many loonies to pay")
                           r" how many (?!(?:do|would|will|are|did|should|can|could|of|units?|pieces?|items?|pairs?|packs?|"
                           r"sets?|people)\b)[a-z]+ (?:[a-z]+ ){0,5}?(?:spend|spending|pay|paying|fork|shell|splash|part with|"
                           r"allocate|allocating|budget|put towards)\b")
_ORDER_WORDS = (" order ", " orders ", " ordered ", " purchase ", " purchases ", " bought ")
_GENERIC_VARIANT = ("variant", "version", "option", "style", "edition", "which kind", "which type")
#: A topic set aside ("Other than the brand, anything else?", "Besides the colour, ..."): it is not asked.
_EXCEPT_TOPIC = re.compile(r" (?:other than|apart from|aside from|besides|except(?: for)?) (?:the |your |its )?[a-z]+ ")
#: The screen as the product that has features ("What else should the screen have?"), not its size.
_SCREEN_HAS = re.compile(r" the (?:screen|display)(?= (?:have|has|offer|offers|support|supports|come with|comes with|do|does) )")
#: "express" that says how something is given ("your express consent"), not a delivery speed.
_EXPRESS_VERB = re.compile(r" express (?:written )?(?:consent|permission|approval|agreement|authori[sz]ation|wish|wishes|interest|"
                           r"request|instruction|instructions|confirmation) ")
#: Words that name a topic only in a figure of speech ("Which of our star performers ...?", "Multiple choice: A) ...").
_FIGURE_OF_SPEECH = re.compile(r" (?:star (?:performers?|players?|attractions?|turns?|of the show)|multiple choice|"
                               r"brand (?:spanking )?new|phone a friend) ")
# ... "a brand-new Bolt 3": no brand asked; a game show's "phone a friend": no connector
#: "pcs" counted ("how many pcs", "2 pcs"): pieces, not computers.
_PIECES = re.compile(r"( (?:how many|\d+|one|two|three|four|five|six|a few|few|many|several)) pcs ")
#: Words that name the screen's size, so a "size" among them is the screen's (not "screen, size, material").
_SCREEN_SIZE = re.compile(r"(?:screen|display|monitor) (?:size|dimensions?)|(?:screen|display|monitor)\b[^.?!]{0,40}\b(?:size|how big|how large)\b|(?:size|dimensions?) (?:of (?:the |your )?)?(?:screen|display|monitor)|"
                          r"\b(?:big|bigger|large|larger|size|compact|smaller|wider)\b[^.?!,;]{0,30}\b(?:screen|display|monitor)|"
                          # a size in inches ("Any size in mind, like 24 or 27 inch?")
                          r"\bsize\b[^.?!]{0,40}\d\s?(?:inch|inches|in\b(?!\s+(?!or\b|and\b)[a-z])|\"|”)|\d\s?(?:inch|inches|in\b(?!\s+(?!or\b|and\b)[a-z])|\"|”)[^.?!]{0,40}\bsize\b")
#: Phrases that ask for any further requirement even beside a topic ("any other details, like size?").
_OPEN_STRONG = ("anything else", "any other", "anything more", "something else", "what else", "other requirement",
                "other wish", "other demand", "remaining requirement",
                "other preference", "other thing", "other detail", "other spec", "other criteria", "other need",
                "further detail", "additional", "extra requirement", "anything missing", "anything further",
                "anything extra", "whatever else", "what more", "something more", "more wish", "more wishes", "further requirement", "further need", "further wish",
                "further preference", "left out", "forgotten", "forget anything", "tell me more", "tell me a bit more", "tell me a little more", "more about what",
                "what else", "other stuff", "more you need", "more you want", "more you would like", "more youd like",
                "more you require", "what besides", "further specification", "other specification", "what still",
                "more to it", "or is there more", "is there more", "still to know", "else to know",
                "havent i asked", "i havent asked", "have i not asked", "other ask", "other asks")
#: A count at least ("Stars are how important, 4 or more you need?"): no open "more you need".
_AT_LEAST = re.compile(r" (?:\d+|one|two|three|four|five|six|seven|eight|nine|ten) or more(?= (?:do |would |will )?you )")
#: Phrases that ask an open question only when no topic is named ("what's most important?").
_OPEN_WEAK = ("must have", "must haves", "deal breaker", "requirement", "preference", "needs", "need it to",
              "looking for", "youre after", "you are after", "in mind", "important", "matters", "matter most",
              "avoid", "rule out", "dont want", "do not want", "bear in mind", "keep in mind", "take into account",
              "should i know", "should know", "describe", "ideal", "perfect for you", "feature", "use case",
              "wishlist", "wish list", "specific", "what you need", "what do you need", "particular", "special", "criteria", "constraint", "specs",
              "details", "narrow it down", "shoot", "go on", "exactly do you need", "would you like it to have",
              "care about", "what do you want", "what are you after", "what would you like", "are you after",
              "what exactly", "steer clear", "tell me what", "what youd like", "what you would like",
              "what you want", "to have", "use it for", "using it for", "use it", "i missed", "ive missed",
              "have i missed", "stay away from", "priorities", "priority", "wishes", "conditions", "condition",
              "look out for", "what sort", "what type", "what kind", "what is it for", "whats it for",
              "what for", "what do you plan", "how do you plan", "how will you use", "how would you use",
              "what will you use", "what would you use", "thoughts", "ideas", "what are you hoping",
              "what are you looking", "hoping to find", "what do you have in mind", "how can i help", "help you find", "what brings you", "occasion",
              "used for", "be used", "be using", "what youre thinking", "what you are thinking", "thinking of",
              "your setup", "setup like", "tell me about", "look for", "a bit more", "a little more", "say more",
              "everything you need", "everything you want", "consideration", "dont like", "do not like", "dislike",
              "why did you", "dont you like", "do you not like", "dont you want", "did you like", "you liked",
              "like about", "other request", "main thing", "thing you want", "things you want", "where are you",
              "where will you", "where would you", "where do you", "indoor", "outdoor", "for yourself", "buying it for",
              "buying for", "gift", "present for", "more info", "more information", "miss anything",
              "missed anything", "missing anything", "missing something", "to add", "must", "mustnt", "picky", "matter to you", "matters to you",
              "qualities", "no go", "essential", "expectations", "checklist", "clearer picture", "ought to know",
              "need to know", "should be aware", "what would make", "better than", "is this for", "is it for",
              "will it be for", "trying to solve", "looking to solve",
              # the same in the first person plural and other words ("What are we after?", "So what's the brief?")
              "are we after", "were after", "we looking for", "can i find", "find for you", "can i get you",
              "one thing", "the brief", "be doing", "going to do", "supposed to do", "meant to do", "dream",
              "non negotiable", "negotiable", "eye out for", "watch out for", "the plan for", "plans for", "plan to use",
              "narrow this down", "narrow things down", "narrow down", "whats driving", "what is driving", "make or break",
              "dealbreaker", "main goal", "the goal", "your goal", "the aim", "your aim", "purpose", "compromise",
              "trying to achieve", "hoping to achieve", "working with", "on your list", "your list", "the perfect",
              "your perfect", "your own words", "what are we looking at", "has to", "have to", "tick", "going to be for",
              "hoping to get", "want to get out of", "get out of it", "what will make", "what could make",
              "what might make", "looking out for", "watching out for", "keeping in mind", "key things", "the key",
              "things you need", "thing you need", "spec", "the story", "features you need", "things you like", "things youd like",
              # in Spanish ("Dime todo lo que necesitas")
              "lo que necesitas")

#: Phrases that ask the shopper's go-ahead (to confirm the cart, start the return ...).
_CONFIRM = ("confirm", "look good", "looks good", "look right", "looks right", "look correct", "looks correct",
            "look ok", "looks ok", "look okay", "look alright", "looks alright", "look complete", "look fine",
            "is that everything", "is this everything", "is that all", "is this all", "is that right",
            "is this right", "is that correct", "is this correct", "shall i", "shall we", "ready to", "confirmation", "do i place", "do we place", "do i order",
            "do i check out", "do i go ahead", "do i proceed",
            "ready for me", "good to go", "go ahead", "proceed", "finalize", "finalise", "finalising",
            "finalizing", "check out", "checkout", "all set", "happy with", "happy for me", "ok to", "okay to", "ok if i", "okay if i", "alright if i", "green light", "sound good",
            "sounds good", "does that work", "work for you", "we good", "are we good", "all correct",
            "everything correct", "all good", "what you wanted", "before i finish", "change before", "as is",
            "wrap up", "lock this in", "lock it in", "right item", "correct item", "place the order",
            "place it", "submit", "complete the", "complete it", "finish up", "and finish", "can i finish",
            "sign off", "that right", "may i", "everything right", "got everything", "double check", "your permission",
            "way you want", "as you want", "what you asked", "everything as", "everything in order", "ready to go",
            "are you good with", "you okay with", "you ok with", "you fine with", "you alright with", "put it through",
            "put the return through", "put this through", "go through with",
            "all done", "are we done", "done here", "are we finished", "we finished", "get this ordered", "buy these",
            "buy it", "buy them", "file the return", "to return it", "checking out", "as a yes", "that the lot",
            "stopping me", "is it a go", "are we a go", "is that a go", "any objection", "any objections", "a yes",
            "authorise", "authorize", "authorisation", "authorization", "seal the deal", "have a deal", "your ok", "your okay",
            "consent", "agreeable", "going ahead", "thumbs up",
            "no objection", "no objections", "object to me", "object if i",
            # slang and the shopkeeper's words ("pull the trigger?", "hit the buy button?", "Will that be everything?")
            "pull the trigger", "buy button", "order button", "hit buy", "that be everything", "that be all",
            "you be taking", "we doing this", "your acceptance", "your acknowledgement", "your acknowledgment",
            "say yes", "the nod", "in agreement", "locking this in", "locking it in", "place order", "that you sorted",
            "thatll be all", "thatll be everything", "thatll do", "we on for", "say the word", "give me the go", "its a go",
            # leave in a captain's or pilot's words ("Do I have clearance to launch?"; not a clearance sale)
            "clearance to", "have clearance", "your clearance", "cleared to")
_ACTIONS = (r"(?:go(?! for | with )|proceed|start|process|add|place|submit|initiate|finali[sz]e|complete|check|order|file|buy|put|"
            r"return|wrap|book|lock|finish|confirm|send|get|make|set|begin|raise|open|issue|arrange|pay|close|"
            r"purchase|continue|move|carry|sort|push|process|lodge|log|request|approve|go ahead|ring|finish|cancel|"
            r"refund|exchange|replace|swap|reorder|ship|dispatch|despatch|schedule|release|execute|transact|action|handle|kick off|pop|fire off|"
            r"ring up|press|cop|greenlight|green light|authori[sz]e|exit|validate|launch)")
#: An alternative said as what the agent might do instead ("..., or shall we keep an open mind?"): a go-ahead only where
#: it names a step ("..., or shall I order it?"; "keep an open mind" opens nothing).
_OR_SHALL = re.compile(r"^ or (?:shall|should) (?:i|we) ")
_ACTION_WORD = re.compile(r" " + _ACTIONS + r" (?!mind )")
#: Asking leave to act: "want me to / like me to / ok if I / mind if I / can I / shall we ... <action>" (not
#: "which brands you'd like me to stick to", nor negated: "a price you don't want to go past").
_ACTION_OFFER = re.compile(r"(?<! i)(?<! we)(?<! id)(?<! dont)(?<! doesnt)(?<! wouldnt)(?<! never) (?:(?:want|wanting|like|need|wish) me to|fancy me|ok if i|okay if i|alright if i|fine if i|mind if i|"
                           r"can i|could i|may i|should i|shall i|shall we|can we|should we|will i|will we|like to|want to|"
                           r"(?:ok|okay|fine|alright|good) (?:for|with) you (?:that|if) (?:i|we)|(?:we|i) go to|(?:want|wish|like) you that (?:i|we)|"
                           # leave asked in a condition or a calque ("let me know if I should send it", "want that I start")
                           r"(?:if|whether) (?:i|we) (?:should|can|may|shall)|(?:permit|allow) (?:me|us) to|(?:good|cool) if (?:i|we)|whether to|(?:want|wish|like|prefer) that (?:i|we)|"
                           r"ready to|ready for me to|(?:ok|okay|alright|fine|good|set) for me to|good to|fine to|ok to|okay to|happy to|happy for me to|"
                           r"i can|i could|let me|i will|ill|i would|i shall|we shall) (?:just |now |then |go ahead and |quickly |also )?"
                           + _ACTIONS + r"(?:s|ed|ing)? ")
#: "Do you want the refund processed?", "Would you like it booked in?": the go-ahead asked as a wish for a thing done.
_DONE = (r"(?:processed|returned|refunded|booked|placed|ordered|started|submitted|finali[sz]ed|arranged|sorted|"
         r"cancelled|canceled|exchanged|replaced|sent back|put through|raised|lodged|logged|actioned|"
         r"completed|confirmed|checked out|sent off|sent out|bought|purchased|paid for)")
_WANT_DONE = re.compile(r" (?:want|like|need) (?:the|it|this|that|them|these|your|my)(?: [a-z0-9]+){0,3} " + _DONE + r" |"
                        # the step asked in the passive ("May the order be placed now?")
                        r" (?:may|can|could|shall|should) (?:the|it|this|that|these|they|your)(?: [a-z0-9]+){0,3} (?:now |then )?be "
                        + _DONE + r" |"
                        # the step's destination ("Would you like the refund to your original card?")
                        r" (?:want|like) (?:the|a|your) (?:refund|replacement|exchange|credit) (?:to|on|back to|sent to|paid to|"
                        r"issued to|credited to|as) ")
#: "Navy, or do you want something else?": another value of the topic asked, not any further requirement.
_ALTERNATIVE = re.compile(r" or (?:do you want |would you like |would you prefer |you want |youd like |youd prefer |"
                          r"perhaps |maybe |possibly )?(?:something|some other|some) ?(?:else|different|thing) ")
#: "Is it the order you want to return?": the customer's wish in a relative clause, not leave asked to act.
_RELATIVE_WISH = re.compile(r" (?:order|item|one|thing|product|purchase)s? (?:that |which )?you (?:want|would like|wish|need|"
                            r"d like|id like) to [a-z]+ ")
#: The agent's own next step ("before I pay", "once I search"): its verb is no topic.
_OWN_STEP = re.compile(r" (?:before|once|after|when|until|till|so) (?:i|we)(?: can| will| ll| could)? [a-z]+ ")
#: Searching is no act to approve: "shall I look for X?" asks whether X is wanted.
_SEARCH_FOR = re.compile(r" (?:shall|should|can|could|may) (?:i|we) (?:just )?(?:look|search|hunt|shop|filter|browse)(?:ing)? ")
#: A step named only as the time of the question ("your size before checking out"): no leave asked.
_OWN_STEP_GO = re.compile(r" (?:before|once|after|until|till) [a-z]+ing(?: out| up| it| them| the order| the return)? ")
#: A short question that takes up what the statement before it offers ("Would you like that?", "Does that suit?").
_ACCEPT_OFFER = re.compile(r" (?:that|this) (?:ok|okay|alright|fine|good|suit|work|sound)|(?:like|want|prefer|fancy) (?:that|this) |"
                           # "Once you're happy, I can order it. Are you?"
                           r"^ (?:so |and )?are you $|"
                           # "I'll book the return on the headphones. Alright?"
                           r"^ (?:so |and )?(?:ok|okay|alright|all right|agreed|deal|fine|good|cool|yes|yeah)(?: (?:with|for|by) you)? $")
#: Asked to confirm a fact of the line ("can you confirm it's the September 10 order?", "confirm the item"): which line.
_CONFIRM_FACT = re.compile(r" (?:you|please|to) confirm (?:that |for me )?(?:it is |its |it was |the (?:item|order|product|date|"
                           r"one|purchase)|which|when|what)")
#: "Is everything / the cart / that ... right?": asks approval of what was done (when no topic is asked).
_APPROVAL = re.compile(r" (?:is|are|was|does|do|will|would|did) (?:the |your |this |that |my )?(?:everything|all|cart|basket|"
                       r"order|this|that|it|these|they|list|items|return|selection|ticket|bill|docket|quote|tab|panier)(?: [a-z0-9]+){0,3} (?:right|"
                       r"correct|ok|okay|fine|good|alright|accurate|complete|perfect|satisfactory|acceptable|"
                       r"in order|as expected|what you|how you (?:want|wanted|like|need)|the way you (?:want|like)|"
                       # "Here's your cart. Is it all as it should be?", "Does the cart look as you wanted?"
                       r"as (?:it|they|everything) (?:should|ought to) be|as you (?:want|wanted|expected|asked|ordered|"
                       r"intended|hoped|wished|like|liked|need|needed)|as (?:youd|you would) (?:like|want|wish|have))|"
                       # "Is that the full load?", "Is this the whole order?": the summary as all there is
                       r" (?:is|was) (?:that|this|it) (?:the )?(?:full|whole|entire|complete) (?:load|lot|catch|haul|order|list|"
                       r"cart|basket|trolley|shebang|squad|team)(?: [a-z]+)? $|"
                       # "Please review your cart and let me know if it's right."
                       r" (?:let me know|tell me) (?:if |whether |that )?(?:it|its|it s|that|thats|that s|everything|all|this)"
                       r"(?: is| s)?(?: all)? (?:right|correct|ok|okay|fine|good|in order|accurate)(?: $| to )|"
                       # "Would you mind confirming that your cart is correct?", "... confirming the cart is accurate?"
                       r" (?:that|if|whether|confirm|confirming|check|checking|verify|verifying) (?:that |if |whether )?"
                       r"(?:the |your |this |my )?(?:cart|basket|order|selection|list) (?:is|looks|seems) "
                       r"(?:[a-z]+ )?(?:right|correct|ok|okay|fine|good|complete|accurate|in order|how you want)")
#: The same asked without its auxiliary, as the whole question ("Everything correct?", "Everything is correct?",
#: "That the one, mate?", "That the full load?", "That your order?"): asks approval of the summary before it.
_BARE_APPROVAL = re.compile(r"^ (?:so |and |ok |okay |right |now |then )?(?:(?:that|thats|this) (?:the one|all|it|everything|"
                            r"the lot|your order|the (?:full|whole|entire) [a-z]+)|(?:everything|it all) (?:is |s )?(?:all )?"
                            r"(?:correct|right|ok|okay|fine|good|in order|present and correct))(?: then)?"
                            r"(?: (?:love|mate|pal|duck|unna|eh|yeah|innit|friend|boss|chief|sir|madam|aye|bestie))? $|"
                            # ... or as how it looks, or all of the cart's contents ("Everything in the trolley right,
                            # mate?", "cart look right to u", "thats everything in ur cart right")
                            r"^ (?:so |and |ok |okay |right |now |then )?(?:(?:the |your )?(?:everything|it all|it|cart|basket|"
                            r"trolley|order|bag)(?: in (?:the|your) (?:cart|basket|trolley|bag))? (?:look|seem|feel) (?:right|"
                            r"correct|ok|okay|good|alright)(?: to (?:you|ya))?|(?:that|thats|this) (?:everything|all|the lot) in "
                            r"(?:the|your) (?:cart|basket|trolley|bag)(?: right| yeah| correct)?|everything in (?:the|your) "
                            r"(?:cart|basket|trolley|bag) (?:is |s )?(?:right|correct|ok|okay|good|in order))"
                            r"(?: (?:love|mate|pal|duck|eh|yeah|friend|boss|sir|madam|aye|bestie))? $")
_SATISFIED = (" satisfied ", " content with ", " happy ", " pleased with ", " approve ", " approval ", " sign off ",
              " thumbs up ", " yes or no ")
#: "May I ask ...", "Could I just check ...": leave to ask a question, which is what it asks.
_ASK_LEAVE = re.compile(r" (?:may|can|could|might) (?:i|we) (?:just |please |also |quickly |first )?(?:ask|know|enquire|inquire|"
                        r"find out|check what|check which|check how|check when|have your|get your|take your|learn|"
                        # "May I please have the size you require?": a fact asked for, no leave to act
                        r"(?:have|get|take|grab|note|request) the (?:[a-z0-9]+ )?(?:size|colour|color|material|brand|budget|"
                        r"quantity|connector|reason|date|order number|delivery|rating|price))\b")
#: "Shall we go through what you need?", "Can we talk about your budget?": leave to talk about something asks it.
_DISCUSS = re.compile(r" (?:shall|should|can|could|may) (?:we|i) (?:just |quickly |first )?(?:go|run|talk|walk) (?:you )?through |"
                      r" (?:shall|should|can|could|may) (?:we|i) (?:just |quickly |first )?(?:discuss|talk about|chat about|"
                      r"start with|begin with|cover|look at what) ")
#: A clause that is the agent's own next step ("Before I place it, ...", "once we check out, ..."): it asks nothing.
_OWN_STEP_CLAUSE = re.compile(r"^ (?:so |and |but |ok |okay )?(?:before|once|after|when|until|till|as soon as) (?:i|we)\b")
_TELL_ME = re.compile(r" go ahead and (tell|share|describe|list|let|give|explain) ")
#: A tag question after a statement ("I can start the return now - okay?").
_TAG_QUESTION = re.compile(r"[,;:\-–—]\s*(?:(?:(?:it |that |this )?is |its |is (?:it|that|this) )?(?:ok|okay|alright|fine)|right|yes|ya|"
                           r"yeah|sound good|good|yes ?/ ?no|yes or no|y ?/ ?n)"
                           r"(?: (?:for|with) you)?\s*\?\s*$",
                           re.IGNORECASE)
#: A wh-question about a topic ("which size shall I put in?") asks the topic, whatever else it says.
_WH_START = (" which ", " what ", " whats ", " how ")

#: Phrases that ask which order or item the customer means (disambiguation by date or detail).
_WHICH = ("which order", "which item", "which product", "which purchase", "which shipment", "which package",
          "which of your order", "which of these", "which is it", "which did you mean", "which one do you mean",
          "do you mean", "did you mean", "are you referring", "referring to", "you asking about",
          "youre asking about", "talking about", "order number", "order id", "order date", "order no", "when did you order",
          "when did you buy", "when did you get", "when did you purchase", "when did you place", "when you ordered",
          "when you bought", "when you placed", "roughly when", "when was it", "how long ago", "what date",
          "which date", "recall the date", "the date you", "the one delivered", "the one you ordered",
          "was it ordered", "recent order", "exact item", "what did you order", "describe the item",
          "describe the product", "more about the item", "more about the product", "more details so",
          "find the right", "the right order", "specify the item", "specify which", "clarify which",
          "narrow down which", "older or the newer", "newer or the older", "in your history", "order reference",
          "order ref", "reference number", "date of purchase", "purchase date", "date of the order", "the two order",
          "one you mean", "which one are you after", "when you ordered", "when did you", "order from",
          "order placed", "placed on", "ordered in", "ordered on", "what did you buy",
          "what did you get", "what you bought", "what was the item",
          # the order asked beside the reason ("Please state the order concerned and the reason for return.")
          "the order concerned", "order and the reason", "order and reason",
          # the order to be named ("Identify the order and state the grounds for the return.")
          "identify the order", "identify your order", "identify which",
          # the order as what is asked for ("the order in question and the fault", "Tell me the order and what broke.")
          "order in question", "tell me the order", "give me the order", "tell me the date", "give me the date",
          "tell me date of", "give me date of", "tell me which order", "send me the order", "share the order")
#: Phrases that ask a detail of a past order ("what did it look like?"); they ask which order only when
#: the customer has orders in play.
_WHICH_PAST = ("it was", "was the", "look like", "the older", "the newer", "a different pair", "a different one",
               "or the one", "the one on", "the one from", "exact product", "was it the", "was that the",
               "when did it", "did it arrive", "did it come", "it arrived", "it came")

#: Words of a question about an order line (substrings of the lower-cased message): which one, when it was
#: ordered, what it cost. With the customer's orders in play they ask which line is meant, whatever else the
#: message asks; the account shoppers pick their answer (date, price, item) by the same words.
LINE_WHICH_WORDS = ("which", "what item", "what product", "more detail", "exact", "do you mean", "order number",
                    "order id")
LINE_WHEN_WORDS = ("when did you", "what date", "which date", "what day", "how long ago", "roughly when",
                   "when was", "when you ordered", "when you bought", "order date", "exact date")
LINE_PRICE_WORDS = ("how much", "price", "pay", "paid", "cost")
_LINE_MONTHS = _MONTH_NAMES
_LINE_DATE = re.compile(r"\b(" + "|".join(m[:3] for m in _LINE_MONTHS) + r")[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b"
                        r"|\b(\d{4})-(\d{2})-(\d{2})\b")
_LINE_PRICE = re.compile(r"\$\s?(\d+(?:\.\d{1,2})?)")


def named_dates(text: str) -> list[tuple[int, int]]:
    """(month, day) of each date a lower-cased text names ("march 3", "mar 3rd", "2025-03-03"), in order."""
    out: list[tuple[int, int]] = []
    for found in _LINE_DATE.finditer(text):
        if found.group(1):
            month = next(i for i, m in enumerate(_LINE_MONTHS, 1) if m.startswith(found.group(1)))
            out.append((month, int(found.group(2))))
        else:
            out.append((int(found.group(4)), int(found.group(5))))
    return list(dict.fromkeys(out))


def named_prices(text: str) -> list[float]:
    """Each dollar price a lower-cased text names, in order."""
    return list(dict.fromkeys(float(p) for p in _LINE_PRICE.findall(text)))


def _asks_about_line(lowered: str) -> bool:
    """Whether a lower-cased question asks about an order line: which one, when, how much, or which of
    named dates or prices."""
    return (any(w in lowered for w in LINE_WHICH_WORDS + LINE_WHEN_WORDS) or _LINE_PRICE_ASKED.search(lowered) is not None
            or len(named_dates(lowered)) >= 2 or len(named_prices(lowered)) >= 2)


#: A price word as a word of its own ("what did you pay?", not "your original payment method").
_LINE_PRICE_ASKED = re.compile(r"\b(?:" + "|".join(map(re.escape, LINE_PRICE_WORDS)) + r")(?:s|ed|ing)?\b")


#: Phrases that ask for the cause itself ("why", "what happened"): they ask why the customer returns the
#: item in any clause that asks.
_REASON_ASKS = ("why", "reason", "whats wrong", "what is wrong", "what happened", "whats happened", "what has happened",
                "whats gone wrong", "what has gone wrong", "what made you", "how come",
                "whats up with", "matter with", "prompted", "prompting", "what led you", "whats led", "what has led", "what led to", "what caused", "whats behind",
                "what is behind", "amiss", "story with", "story behind", "in what way", "what way",
                # the nature of what is wrong, not of a thing ("the nature of the device it plugs into")
                "nature of the fault", "nature of the problem", "nature of the issue", "nature of the defect",
                "nature of the complaint", "nature of the trouble", "nature of the damage", "nature of the concern",
                "nature of the malfunction", "nature of the dissatisfaction", "nature of the return", "nature of your",
                "nature of the difficulty", "nature of the difficulties",
                "nature of it",
                # "what for" word for word ("What for you return it?"), "for what reason"
                "what for you", "what for do you", "what for are you", "what for did you", "for what reason", "motive",
                "brought this on", "brought this about", "whats made you", "what has made you", "put you off",
                "motivation",
                # formal and other-language words for the cause ("state the grounds for the return", "For what cause ...?")
                "grounds for", "what cause", "justification", "rationale", "what brings", "awry",
                "circumstances", "led to", "because of what", "whats brought", "what has brought", "what brought",
                "went down", "basis for", "whats with", "what is with", "explanation", "whatever made you", "possessed you",
                # what has the customer sending it back ("Ah no, what has you sending it back?"; a blind paraphrase)
                "what has you sending", "what has you returning", "what had you sending", "what had you returning",
                "whats got you sending", "whats got you returning", "what has got you sending", "what has got you returning",
                # the cause asked by its consequence, in German word order ("What has the hoodie that you send it back?")
                "that you send it back", "that you send them back", "that you give it back", "the grounds",
                # what to enter on the return form ("..., what shall I write?")
                "what shall i write", "what should i write", "what do i write", "what shall i put down", "what should i put down", "ailed", "ails", "ailing", "whats got you", "what has got you", "what got you",
                "beef with", "what happen with", "what happen to",
                # the cause named as a noun ("May I enquire as to the cause of the return?")
                "cause of the return", "cause of your return", "cause of return", "cause for the return",
                # what moves the customer to return it, and its root ("What drives you to return it?", "the root cause")
                "drives you to", "drove you to", "driving you to", "root cause",
                # in Spanish and in an old register ("qué pasó", "Wherefore dost thou return it?")
                "que paso", "wherefore",
                # the customer's displeasure asked ("What was it about the cable that did not satisfy you?", "what troubled
                # you?", "what displeased sir about it?", "what about it did not serve you?")
                "did not satisfy", "didnt satisfy", "troubled you", "troubles you", "displeased", "did not serve you",
                "didnt serve you", "did not suit you", "didnt suit you")
#: Phrases that name a fault ("faulty", "the problem", "went wrong"): they ask why only in a clause that asks
#: nothing else about the item ("Is it faulty?", "Was there a problem?"), not where they describe the item a
#: which-order or go-ahead question is about ("Which order has the problem?", "Shall I return the faulty one?").
_REASON_STATES = ("anything wrong", "something wrong", "wrong with", "went wrong", "happened with", "wrong about",
                  # a fault in idiom ("What went south with the hoodie?", "Has the cable given up charging?", "Cable
                  # carked it?", "Was the hoodie not as you hoped?")
                  "went south", "gone south", "given up", "carked it", "not as you hoped", "not what you hoped",
                  "problem", "issue", "faulty", "fault", "defect", "defective", "damaged", "broken", "change your mind",
                  "changed your mind", "not what you expected", "stop working", "stopped working", "not working",
                  "doesnt work", "does not work", "not right with",
                  # how a fault or a mismatch is also said ("Has it packed in?", "Was it the wrong size?", "Did it
                  # break?", "Not as described?", "Did you just not like it?")
                  "trouble", "packed in", "packed up", "conked out", "gave up", "break", "broke", "breaks", "cracked",
                  "torn", "ripped", "leaking", "wrong size", "wrong colour", "wrong color", "wrong item",
                  "wrong product", "wrong model", "wrong thing", "not as described", "not as advertised",
                  "not as pictured", "not what you", "gone wrong", "didnt you like", "did you not like", "dont you like",
                  "do you not like", "you didnt like", "you did not like", "not happy", "unhappy", "not satisfied", "disappointed", "unsuitable", "not suitable",
                  "fall short", "fell short", "scratched", "dented", "chipped", "stained", "faded", "shrunk", "bent",
                  "smashed", "missing parts", "parts missing", "dud", "duff", "let you down", "let down", "damage", "quality", "not match", "didnt match",
                  "doesnt match", "up to scratch",
                  "up to standard", "not good enough", "not for you", "not to your taste", "not quite right", "not your style",
                  "cheaper elsewhere", "found it cheaper", "better price elsewhere", "no longer need", "dont need it",
                  "not need it", "falls short", "change of mind", "change of heart", "not right about",
                  "whats not right", "what is not right", "didnt work out", "not work out", "not like it", "didnt like it", "dont like it", "not suit",
                  "didnt suit", "doesnt suit", "not fit", "not fitting", "didnt fit", "doesnt fit",
                  # how it fell short in use ("Were they uncomfortable?", "Was it a bit disappointing?")
                  # (not "too heavy", "too long": the degree a requirement allows, "Is a week too long to wait?")
                  "uncomfortable", "uncomfy", "disappointing", "flimsy", "noisy", "itchy", "scratchy", "rubbish",
                  "useless", "poor quality", "cheaply made", "not comfortable", "not as expected", "not what it",
                  "different from the", "not the same as", "shrink", "shrank", "missing", "arrived missing",
                  # how it compared ("Was it worse than expected?", "not as good as the old one?")
                  "faults", "problems", "issues", "defects",
                  "different from what", "different to what", "from what you expected",
                  "live up to", "lived up to", "not quite what", "what you were hoping", "happening with", "thats off",
                  "bad state", "bad condition", "poor condition", "bad shape", "not compatible", "incompatible",
                  "frayed", "crackling", "crackly", "buzzing", "hissing", "distorted", "peeling", "wobbly",
                  "overheating", "overheats", "rattling", "flickering", "flickers", "snapped", "came apart", "fell apart",
                  "coming apart", "pilling", "bobbling", "rusted", "rusty", "warped",
                  "worse than", "not as good", "than expected", "than you expected", "than you thought", "than you hoped",
                  "than advertised", "than described", "than pictured", "than it looked", "not good with", "not good about",
                  "whats not good", "what is not good", "what was not good",
                  # the wish gone ("You didn't want it any more?")
                  "want it any more", "want it anymore", "need it any more", "need it anymore", "no longer want",
                  # in slang, idiom and other word orders ("What went sideways?", "Something off with it?", "not up to par",
                  # "not okay with it", "not feeling it", "a no for you", "The cable, what has it got?")
                  "sideways", "up to par", "not okay", "not ok", "something off", "off with it", "off with the",
                  "not feeling it", "wrong fit", "disappoint", "a no for you", "what has it got", "up to much", "complaint",
                  "complaints", "the fit", "you expected", "busted", "bust", "kaput", "knackered", "on the fritz", "playing up", "acting up",
                  "not right for", "didnt work", "did not work", "not like about",
                  # a fault in trade and dialect words, often without the auxiliary ("Cable gone dodgy on you?", "Is it
                  # banjaxed?", "Was the item DOA?", "Cable short out on ya?", "Them headphones gone quiet?", "Hoodie got
                  # hole or something?", "It come mash up in de box?", "Is the cable fraying?", "Headphones dying mid-run?")
                  "dodgy", "banjaxed", "doa", "gone quiet", "went quiet", "go quiet", "short out", "shorted out", "shorting out",
                  "fraying", "mash up", "mashed up", "got hole", "got a hole", "dying", "gave out", "give out", "conked out",
                  "packed up", "pack up",
                  "not do what", "unusable", "fail", "failed", "fail you", "failed you", "happened to",
                  "not sound right", "not agree with you", "done wrong", "give up", "given up", "is not right", "its not right",
                  # how a fault is said in other words ("dead on arrival", "on the blink", "cutting out", "spoilt",
                  # "unsatisfactory", "not living up to the listing", "not same as the picture", "bad with it")
                  "dead on arrival", "on the blink", "cutting out", "cuts out", "cut out", "dropping out", "drops out",
                  "spoilt", "spoiled", "spoil", "munted", "unsatisfactory", "living up to", "not same as", "different than",
                  "different from your", "bad with", "somethings off", "ceased to", "going on with", "not vibe",
                  "not the right fit", "not quite the right fit",
                  # wear, knocks and a shortfall in other words ("Has it worn through?", "Did it get banged up on the way?",
                  # "the wrong dimensions", "Did it not meet your expectations?", "Report the malfunction.")
                  "worn through", "banged up", "bashed up", "knocked about", "beaten up", "wrong dimensions",
                  "not meet your expectations", "not meet expectations", "below expectations", "below your expectations",
                  "malfunction", "malfunctioning", "too snug",
                  # a fault said as a death, a failure in use, a hole or a letdown ("Did it die on you?", "gone dead",
                  # "failing to charge", "a hole in it", "not keeping out the noise", "Was the size not good?",
                  # "not like the picture", "Not your flavour?", "not the colour you were expecting", "What went sour?")
                  "gone dead", "went dead", "die on you", "died on you", "died on", "failing to", "hole in", "holes in",
                  "not keeping out", "not blocking out", "was not good", "were not good", "not like the picture",
                  "not like the photo", "not like in the picture", "not your flavour", "not your thing",
                  "not your cup of tea", "you were expecting", "went sour", "gone sour", "turned sour", "whats eating you",
                  # a loss of power, a flaw, a difficulty or what befell it ("Hath the cable lost its power?", "Is it
                  # flawed?", "What difficulty have you had with it?", "What curse hath befallen the headphones?")
                  "lost its power", "lost power", "losing power", "loses power", "flawed", "flaw", "difficulty",
                  "difficulties", "befell", "befallen", "befall",
                  # a failure said as packing up, a spec not met, a bug ("Did it pack up on you?", "Not meeting
                  # spec?", "What's the bug with it?")
                  "pack up", "packs up", "packing up", "not meeting", "not meet spec", "the bug", "a bug", "bugs",
                  "buggy",
                  # a dislike in Spanish ("Was it the color, no te gustó?")
                  "no te gusto",
                  # a fault judged without the auxiliary or the "not" ("Colour no good, or it no fit?", "Wrong part, or a
                  # bad one?", "Sound is bad on it, or what?", "What's it doing wrong?", "Something up with it?",
                  # "What's the craic with them?")
                  "no good", "no fit", "no work", "aint fit", "aint work", "a bad one", "is bad", "are bad", "sounds bad",
                  "doing wrong", "doin wrong", "something up with", "anything up with", "the craic with",
                  # a misfit, a letdown or a wreck in other words ("Was't ill-fitting, or of a colour thou didst not
                  # expect?", "not performing the way you hoped?", "Did it wipe out in shipping?", "Not stoked on it?")
                  "ill fitting", "not expect", "not performing", "not perform", "way you hoped", "wipe out", "wiped out",
                  "not stoked",
                  # a fault said in one word ("Cable dead?"; not "dead set on")
                  "dead")
_REASON = _REASON_ASKS + _REASON_STATES
#: Words by which a clause waives the question it mentions ("whatever the reason", "no need to say why").
_WAIVES = ("whatever", "no matter", "regardless", "no need", "dont need", "do not need", "neednt", "need not",
           "dont have to", "do not have to", "wont need", "will not need", "dont worry about", "no worries about")
#: Openings of a clause that states rather than asks: a subordinate clause ("Since it's not working, ...",
#: "If it's faulty, ...") or sympathy and acknowledgement ("Sorry it broke, ...", "I understand it's faulty").
_STATING_OPENINGS = ("if", "since", "as", "because", "given", "once", "now that", "sorry", "im sorry", "so sorry",
                     "really sorry", "thats a shame", "what a shame", "thats a pity", "i see", "i understand",
                     "understood", "got it", "noted", "thanks", "thank you", "i hear", "i know", "i realise",
                     "i realize", "i appreciate",
                     # the sympathy of a firm ("We're sorry your headphones arrived damaged.", "We apologise that ...")
                     "were sorry", "we are sorry", "were so sorry", "we are so sorry", "were very sorry", "we are very sorry",
                     "we apologise", "we apologize", "apologies", "our apologies",
                     # a purpose ("..., so that ...", "in case ..."; "so it doesn't ...": _PURPOSE_SO)
                     "so that", "in case")
#: A purpose ("..., so it doesn't end up too small?", "..., so I can process it"), not "So it stopped working?", a
#: question that opens with "so".
_PURPOSE_SO = re.compile(r"^ so (?:it|they|i|you|we) (?:can|could|will|would|ll|dont|do not|doesnt|does not|wont|isnt|is not|"
                         r"arent|might|may|should|must|fits?|arrives?|gets?|ends? up|comes?|lasts?)\b")
#: "Whatever is the matter with it?": "whatever" that stresses the question, no waiver.
_WHATEVER_ASKS = re.compile(r" whatever (?:is|was|has|s)? ?(?:the matter|wrong|up|happened|gone wrong|going on|made you|possessed you|"
                            r"prompted you|led you) ")
#: The wish for the item gone ("You don't need it anymore?"): a reason, not a waiver.
_NO_LONGER = re.compile(r" (?:dont|do not|didnt|did not) (?:need|want) (?:it|them|this|that) (?:any ?more|any longer) ")
#: A fault word that names the item ("the broken one", "your faulty cable") rather than asks about it, not the state it
#: came in ("Did it arrive in a damaged state?").
_ATTRIBUTIVE_FAULT = re.compile(r" (the|your|a|an|my)(?: [a-z]+ly)? (?:faulty|defective|"
                                r"damaged|broken|busted|knackered|kaput|dodgy) (?!(?:state|condition|shape|way)\b)")
#: Cause and fault words that are not about the item: the agent's own reason ("why I ask", "the reason I'm
#: asking"), a proposal ("why don't I ...", "why not ..."), the conversation ("no problem", "is that an issue?").
_NOT_THE_ITEMS = re.compile(r" (?:why|reason)(?: that)? (?:i|im|ive|id|ill|we|were|weve) (?!(?:are )?(?:sending|sendin|returning|"
                            r"send|return) (?:it|them|this|that|these|those)\b)| why (?:dont|do not|not)"
                            r"(?! (?:happy|satisfied|pleased|content|working|good|right|ok|okay)\b) |"
                            # the price asked in slang ("What's the damage you're ok with?")
                            r" whats the damage |"
                            # a sum hoped to be spent ("what you were hoping to spend")
                            r" (?:what|how much) you (?:were|are) hoping to (?:spend|pay|put|get|find|buy|order) |"
                            # a going somewhere ("before you went down the shore"), no "what went down?"
                            r" went down (?=(?:the|to|there|south|under)\b)|"
                            # a fault ruled out ("What size would fit without any issues?")
                            r" without (?:any |a |an )?(?:problems?|issues?|faults?|trouble|defects?) |"
                            # a concern about a choice ("Is heft an issue for you?")
                            r"(?: an?)? (?:problem|issue|trouble) (?:for|to) you |"
                            # a polite lead-in ("Might I trouble you to state your colour?")
                            r" trouble you (?:to|for|with) | dead (?:set|keen|easy|simple|quick|cheap|on time) |"
                            # a concern about a requirement ("Does weight trouble you?", "Would the price bother you?")
                            r" (?:does|do|would|will|could|might) (?:the |its |their |a )?(?:weight|heft|price|cost|size|"
                            r"colour|color|brightness|wattage|rating|material|delivery|shipping|screen size) (?:trouble|"
                            r"bother|worry|concern) you |"
                            r" (?:no|not)(?: an?)?(?: big| real| major| huge| great)? (?:problem|issue)s? | (?:that|this) (?:is |would be |will be |be )?an? "
                            r"(?:problem|issue) |"
                            # a problem supposed of a choice ("would it be an issue if ...", "be a problem?")
                            r"(?<! there) be an? (?:problem|issue|trouble) | an? (?:problem|issue) (?:if|for you if|to you if) |"
                            # a problem of the customer's past with a kind of thing ("a material you've had trouble with")
                            r" (?:trouble|problems?|issues?) with(?: before| in the past| previously)? $|"
                            # the agent records the reason ("put the reason down as damaged")
                            r" (?:put|log|record|mark|note|enter|set|list|file)(?: it)?(?: down)? (?:the |a )?reason(?: down)? as |"
                            # a reason said to be given already ("with the reason you gave", "for the same reason")
                            r" (?:the|that|this|your)(?: [a-z]+)? (?:reason|problem|issue|fault)s? (?:(?:that|which) )?(?:you|youve|you have|"
                            r"you had|you already|you just) (?:already |just )?(?:gave|given|give|mentioned|said|stated|told|"
                            r"described|listed|shared|explained|noted|reported|provided|specified|selected|chose|chosen|"
                            r"picked|put|entered|gave us|raised|flagged) |(?<! a) (?:same|stated|given|above|mentioned|"
                            r"previous|earlier|original|selected|chosen) (?:reason|problem|issue|fault)s? ")
#: The reason as what a step is done with ("start the return with the reason ...", "file it under reason X"): in a
#: clause that asks leave to act it names the reason the step records, it does not ask for it.
_NAMED_REASON = re.compile(r" (?:with|for|under|citing|using|giving|stating|as|on|against|per) (?:the|that|this|your|its|a|"
                           r"an|same|their)(?: [a-z]+)? reasons? ")
#: "Was the fit wrong?", "Is the colour wrong?": something about the item said to be wrong.
_WRONG = re.compile(r" (?:was|is|were|are)(?: the| its| it| they| their)?(?: [a-z]+)? (?:all |a bit |just )?wrong |"
                    # a misfit said of the item ("Was it too small?", "they came up too big"), not a degree offered
                    # beside a value ("27 inches - too big, too small, or about right?")
                    # ... or of the item named ("Was the cable too short?"; not "Is a week too long to wait?")
                    r" (?:was|were|is|are) (?:the|your|its|their) (?:[a-z0-9]+ ){1,2}(?:a bit |far |way |much |just |a little )?"
                    r"too (?:small|big|tight|loose|large|short|long|narrow|wide|tiny) |"
                    r" (?:it|they|its|theyre|was|were|is|are|felt|feel|feels|fit|fits|came up|come up|comes up|run|runs|"
                    r"ran|been)(?: a bit| slightly| far| way| much| just| a little| rather| quite| a (?:teeny|tiny|little|wee) bit| a "
                    r"touch)? too (?:small|big|tight|"
                    r"loose|large|short|long|narrow|wide|tiny) |"
                    r" (?:cannot|cant|can not) (?:charg|connect|pair|power|play|turn on|switch on)[a-z]* |"
                    r" (?:stopped|stop|stops|quit|quits|wont|doesnt|does not|didnt|did not|isnt|is not|wasnt|was not|not) (?:charg|work|turn|switch|"
                    r"connect|pair|power|hold|play|function|transmit|respond|sound|light up)[a-z]* ")
#: A sentence that opens with a misfit, as a guess at the fault ("Too small, too big, or something else?"), not a degree
#: offered beside a value ("27 inches - too big, too small, or about right?").
_MISFIT_LIST = re.compile(r"^ (?:so |and )?(?:(?:the |your )?[a-z]+ )?(?:was it |were they |is it |are they )?(?:a bit |just |far )?too (?:small|big|tight|loose|"
                          r"large|short|narrow|wide|tiny)\b(?!.* (?:about|just) right )")
#: The state the item came in, asked ("Did it come spoilt?", "Did it turn up munted?"): a guess at the fault, not when
#: or how it came ("Did it arrive on the 10th?", "Did it come early?").
_ARRIVED_AS = re.compile(r" (?:did|has|had) (?:it|they|the [a-z0-9]+) (?:come|arrive|turn up|show up|get here|reach you)"
                         r"(?: already| all| a bit)? (?!(?:first|last|just|yet|about|out|next|today|yesterday|ok|okay|in|on|at|by|"
                         r"from|with|when|safely|quickly|intact|fine|alright|packed|wrapped|boxed|sealed|dispatched|shipped|"
                         r"delivered|posted|tracked|insured|signed)\b)[a-z]+(?:ed|t|en) ")
#: A yes/no question that guesses at what befell the item or how it fell short, the item (not the customer) its subject:
#: something it did or that happened to it ("Did the strap snap?", "Did it get soaked?", "Has the lid warped?"), or a
#: judgement denied ("Was the fabric just not nice?", "The bass is not good?", "it don't close?"; not a bare "no": "Cable -
#: no charge?" is left to the model, as a "no" made a blind batch's message say the withheld reason). Not a question that picks out a line by a detail (:func:`_identifies_line`: "Was it the red one?", "Is it
#: the lamp from June?"), nor one about its coming ("Did it come in a box?", "Did it ship on time?") or the customer's
#: own doing ("Did you order two?").
_YES_NO_AUX = frozenset(("did", "does", "do", "was", "were", "is", "are", "has", "have", "had"))
_DONE_TO_IT = re.compile(r"^ did (?!(?:you|i|we|he|she|there|anyone|somebody|someone)\b)|"
                         # (a participle after "has": "Has the lid warped?", not "Has it a USB-C port?")
                         r"^ (?:has|have|had) (?:it|they|(?:the|its|their|your) [a-z0-9]+(?: [a-z0-9]+)?) [a-z]+(?:ed|en|t|wn|ne)\b")
_NOT_A_HAPPENING = re.compile(r" (?:come|came|arrive|arrived|ship|shipped|cost|costs|deliver|delivered|get (?:here|there|to|"
                              r"delivered|sent|shipped)|turn up|show up|have|include|includes|mean|belong|go back|be|"
                              r"say|said|list|listed|order|ordered|buy|bought|purchase|purchased|got|get one|gotten)\b")
_DENIED = re.compile(r"(?<! or)(?<! a)(?<! that)(?<! which)(?<! who) (?:not|never|dont|didnt|doesnt|cant|cannot|wont|aint)\b"
                     r"(?! (?:the|that|this|these|those|your|a|an|one|ones|longer|more|later|sooner)\b)(?! so\s*$)"
                     # (not how much a requirement weighs: "or is weight not important?", "is the maker no concern?")
                     r"(?! (?:so |that |very |too |really |all that |at all )?(?:important|concern|concerned|matter|matters|must|"
                     r"essential|fussed|bothered|arsed|worried|priority|big deal|dealbreaker|deal breaker|needed|necessary|"
                     r"required|preference|option|problem|issue|bother|worry|object|of the essence)\b)")
_CUSTOMER = re.compile(r" (?:you|yer|ya|youre|youve|youd|youll|your|i|im|ive|id|we|were|weve)\b")
#: ... but for the item denied as the customer's style ("Was the print just not you?").
_NOT_YOU = re.compile(r" not (?:really |quite |just |very )?(?:you|yer|your style|your thing)\b")
_CUSTOMER_DISLIKE = re.compile(r" (?:you|ya)(?: do| did| just| really){0,2} (?:not|dont|didnt|no) (?:just |really )?(?:like|love|fancy|"
                               r"want it|need it|want them|need them)\b")
_LINE_DETAIL = re.compile(r" (?:one|ones|order|orders|ordered|bought|purchase|purchased|delivered|received|which|mean|"
                          r"first|second|third|last|earlier|later|older|newer|recent|latest|price|paid|cost|date|day)\b|"
                          r" (?:the )?\d{1,2}(?:st|nd|rd|th)?\b| \d+ (?:dollars|bucks)\b")
#: A date in a normalised clause ("august 2", "the 11th").
_DATE_WORDS = re.compile(r" (?:" + "|".join(_MONTH_NAMES) + r")(?: (?:the )?\d{1,2}(?:st|nd|rd|th)?)?(?= )| (?:the )?\d{1,2}(?:st|nd|rd|th)(?= )")


def _identifies_line(words: str) -> bool:
    """Whether a normalised clause picks out an ordered line by a detail: a date, a month, a price, an ordinal, an
    order word, "the ... one"."""
    return _LINE_DETAIL.search(words) is not None or _has(words, _MONTH_WORDS) or _PRICE_FIGURE.search(words) is not None


def _guesses_fault(words: str, yes_no: bool) -> bool:
    """Whether a normalised clause of a yes/no question (``yes_no``: it opens with an auxiliary or ends the
    question) guesses at the fault: something the item did or that befell it, or a judgement of it denied
    (:data:`_DONE_TO_IT`, :data:`_DENIED`), naming no detail that picks out a line."""
    words = _FILLER.sub(" ", words)
    if not yes_no or _opens_with_wh(words):
        return False
    if _DONE_TO_IT.match(words) and not _NOT_A_HAPPENING.search(words) and not _identifies_line(_DATE_WORDS.sub("", words)):
        return True  # (a date only names what it befell: "Did the lamp from May 3 stop?")
    if _identifies_line(words):
        return False
    denied = _DENIED.search(words)
    if denied is None:
        return False
    # the item, not the customer, is denied something ("You don't want a refund?", "You're not in a rush, are you?" ask a
    # wish; "you didn't like it" guesses)
    return not _CUSTOMER.search(_NOT_YOU.sub(" ", words)) or _CUSTOMER_DISLIKE.search(words) is not None


#: A wh-question about a fault ("What's the fault on the August 2 order?", "What is the problem with it?"): it asks the
#: cause, not which line has the fault ("What order had the problem?", "What date was the faulty one from?").
_WHAT_FAULT = re.compile(r"^ (?:so |and |ok |okay )?(?:what|whats)\b(?! (?:is |was |s )?(?:order|orders|item|items|product|"
                         r"products|one|purchase|date|day|month|time)\b)")
#: A negative question ("Doesn't it work properly?", "Wasn't it as described?"): read as the fault it supposes.
_NEGATIVE_QUESTION = re.compile(r" (does|is|was|did|do|are|were|has|have)nt (it|they|this|that|these|those) ")
#: A verb negated in one word ("werent", "didnt"): said in two, as the fault phrases are.
_NEGATED_VERB = re.compile(r" (was|were|is|are|did|do|does)nt (?!(?:it|they|this|that|these|those|you|i|we)\b)")
_PROMISE_AFTER = re.compile(r" (?:and|then|so) (?:ill|i will|well|we will|i can|we can) .*$")
_DISCONTENT = re.compile(r" not (?:happy|satisfied|pleased|content) | (?:didnt|doesnt|did not|does not|not) work (?:out )?for you ")
#: A subordinate clause inside a clause ("... since it's faulty?"): what follows states, it does not ask. Not
#: "because": inside a question it asks whether that is the cause ("Are you returning it because it's faulty?").
_SUBORDINATE = re.compile(r" (?:since|now that|given that|given|seeing as|seeing that|bearing in mind|considering) ")
#: Words that open a clause without changing what it does ("so shall I ...", "and which order ...").
_FILLER = re.compile(r"^ (?:(?:so|and|but|then|ok|okay|well|now|also|just|right|alright) )+")
#: Where a sentence holds two questions ("Which order is it and what went wrong?"): before the second one's
#: question word.
_QUESTION_JOIN = re.compile(r"\s(?:and|an['’]|n['’]|n|\+|&|or|but|also)\s+(?=(?:what|whats|why|how|when|did|was|is|were|has|had|can|"
                            r"could|would|will|do|does|shall|should)\b)", re.IGNORECASE)

_STOCK_OUT = ("out of stock", "sold out", "unavailable", "not available", "no longer available", "not in stock",
              "isnt in stock", "is not in stock", "ran out", "run out of", "none left", "no stock",
              "discontinued", "no longer stocked", "isnt available", "out of it")

#: Opening words of a question without a question mark.
_QUESTION_START = frozenset(("what", "whats", "which", "how", "do", "does", "did", "would", "could", "can", "should",
                             "shall", "is", "are", "will", "may", "any", "when", "where", "who", "why", "wich",
                             "wat", "wats", "whta", "was", "were", "anything", "anyone", "anybody", "whos"))
#: Opening words of a clause that asks (a question word, an auxiliary, a bare "want me to ...?").
_CLAUSE_QUESTION_START = _QUESTION_START | {"has", "have", "had", "got", "want", "need", "happy", "mind"}
#: A listing verb as the heading of what follows ("Sum up:", "List:", "Describe:").
_LISTING_HEADING = re.compile(r"\s*(?:list|describe|summari[sz]e|sum up|spell out|recap|outline|explain)\s*:", re.IGNORECASE)
#: Openings of a request (an imperative that asks the shopper something).
#: A request to say something, said of whom it asks ("Customers are asked to state any further requirements.", "Passengers are kindly
#: requested to give the date of purchase.").
_ASKED_TO = re.compile(r"^ (?:[a-z]+ )?(?:are|is) (?:kindly |politely |now )?(?:asked|requested|invited) to (?:give|state|"
                       r"provide|tell|say|share|specify|describe|indicate|supply|list|name|report|enter|let us know) ")
#: "Shoot" said to have the customer speak, as a sentence of its own ("Any other needs? Shoot!", "Go on, shoot."); not
#: the interjection before a statement ("Well, shoot, that jacket will keep you dry.").
_SHOOT = re.compile(r"^ (?:(?:go on|ok|okay|so|well|then|now|right|alright) )*shoot(?: away| ahead)?"
                    r"(?: (?:then|now|please|partner|mate|pal|friend|love))* $")
_REQUEST_START = ("tell me", "tell us", "let me know", "please", "share", "describe", "specify", "confirm", "give me",
                  # a terse order to say it ("State order number.", "Request full list of requirements.")
                  "state the", "state order", "state reason", "state budget", "state remaining", "state any",
                  "request",
                  "walk me through", "go on", "clarify", "remind me", "summarise", "summarize",
                  # "shoot" with what to send ("shoot them over"); alone, see _SHOOT
                  "shoot them", "shoot it", "shoot me", "shoot us", "shoot over", "shoot across",
                  "spell out", "sum up", "lmk", "pls", "plz", "id love",
                  "i would love", "id like to know", "i would like to know", "i need to know", "i want to know",
                  "help me understand", "fill me in", "go ahead and tell", "go ahead and let me know", "list",
                  "explain", "expand on", "i need more", "i need a bit more", "i need a little more",
                  "i need some more", "id need more", "i would need more", "ill need more", "i will need more",
                  # a need stated as a request ("Just need your size and we're sorted")
                  "just need your", "i just need your", "just need a", "i just need a", "i was wondering", "im wondering", "i wonder", "just wondering", "wondering",
                  "say yes", "just say", "say the word", "give me the nod", "talk me through", "run me through",
                  "take me through", "i need your", "ill need your", "i will need your",
                  # needs said in chat and in passing ("Just need the bed size from you", "kinda need ur budget")
                  "just need the", "i just need the", "need the", "only need the", "i only need the", "only need your", "kinda need",
                  "kind of need", "gonna need", "going to need", "im going to need",
                  "id need your", "need your", "all i need is", "all thats left is", "all that is left is",
                  "all that remains is",
                  "waiting on your", "waiting for your", "just waiting on your", "just waiting for your", "awaiting your", "i just need to know", "just need to know",
                  # formal and scripted openings that ask ("Pray tell me ...", "Permit me to ask ...")
                  "pray", "permit me to ask", "allow me to ask", "permit me to enquire", "allow me to enquire",
                  "kindly", "indicate", "holler",
                  # a machine's terse order ("Input both.", "Identify the order and state the grounds.")
                  "input", "identify the", "identify your", "identify which", "give me a holler", "shout", "say what", "say why", "say which", "say how", "say when")

#: Texting shorthand and common slips, expanded before matching.
_SHORTHAND = {"u": "you", "ur": "your", "r": "are", "pls": "please", "plz": "please", "lmk": "let me know",
              "wanna": "want to", "wich": "which", "wat": "what", "wats": "whats", "whta": "what", "mnay": "many",
              "sise": "size", "szie": "size", "thru": "through", "brake": "break", "waht": "what", "wnat": "want", "shud": "should", "wud": "would",
              "abt": "about", "thx": "thanks", "rn": "right now", "wot": "what", "hw": "how", "sept": "september", "sep": "september",
              "colr": "color", "sz": "size", "rtn": "return", "tmrw": "tomorrow", "tmr": "tomorrow",
              # Northern English ("Owt else, love?", Yorkshire "Is it all reet?", "Is it nobbut one tha wants?")
              "owt": "anything", "nowt": "nothing", "aught": "anything", "naught": "nothing", "summat": "something",
              "tha": "you", "reet": "right", "nobbut": "only", "moren": "more than",
              "lemme": "let me", "gimme": "give me", "k": "ok",
              # endearments no slip of a cue word ("petal" is not "metal")
              "petal": "dear", "poppet": "dear", "dearie": "dear", "duckie": "dear",
              # Scots and Geordie ("Whit size are ye?", "What's up wi' it?", "Divvent the headphones work?")
              "whit": "what", "wi": "with", "ye": "you", "divvent": "dont", "mair": "more", "aboot": "about",
              "ya": "you",
              # Caribbean English ("Tell mih wha happen wid it", "it doh fit?", "Wha size yuh want de hoodie in?")
              "mih": "me", "wha": "what", "wid": "with", "doh": "dont", "yuh": "you", "de": "the", "dat": "that",
              "fuh": "for", "allyuh": "you", "seh": "said", "di": "the", "ting": "thing", "anyting": "anything",
              "everyting": "everything", "wuh": "what", "mek": "make", "wuk": "work", "wukkin": "working",
              # a dropped final g ("Cable ain't chargin' right?", "what's it doin' wrong?")
              "chargin": "charging", "workin": "working", "doin": "doing",
              # ... and Spanish ("y la razón del return?")
              "razon": "reason",
              # the old register's pronouns and verbs ("How many ducats wouldst thou part with?", "thy word")
              "thy": "your", "thine": "your", "thou": "you", "thee": "you", "dost": "do", "doth": "does", "didst": "did",
              "wouldst": "would", "shouldst": "should", "couldst": "could", "canst": "can", "hast": "have", "hath": "has",
              # Spanish words of a question, their accents dropped ("Qué talla?", "Dime ...", "Algo más?"; "qué" is also
              # an exclamation's, "Qué lindo!")
              "talla": "size", "dime": "tell me", "algo": "anything", "mas": "more",
              # a wh-word's "'s" is "is" ("Why's it going back?"): the cue phrases hold the bare wh-word
              "whys": "why is", "whyre": "why are", "whatre": "what are", "whatve": "what have", "whatll": "what will", "whatd": "what would",
              "howre": "how are", "wooden": "wood", "woollen": "wool", "woolen": "wool", "howd": "how would", "wherell": "where will", "whered": "where would",
              # British spellings of store values
              "aluminium": "aluminum", "grey": "gray", "greys": "grays", "hows": "how is", "wheres": "where is", "whens": "when is"}
_MONTHS = _MONTH_NAMES
_MONTH_ABBREVIATIONS = {m[:3]: m for m in _MONTHS} | {"sept": "september"}
_PRICE_FIGURE = re.compile(r"[$£€]\s?\d")
_DAY = re.compile(r"^(\d{1,2})(?:st|nd|rd|th)?$")


#: A unit typed onto its figure in lower case ("27in", "27\"", "40w"; not a product's "1600W"), or a currency sign
#: without one ("max $?", "how many £"): the unit's word, as the cues name it.
_UNITS = {"in": "inch", '"': "inch", "″": "inch", "”": "inch", "w": "watt", "$": "dollars", "£": "dollars", "€": "dollars"}
_UNIT = re.compile(r"(?<=\d)(in|\"|″|”|w)(?![A-Za-z0-9])(?!\s+[A-Z])|([$£€])(?!\s?\d)")


#: "We're", which without its apostrophe would be the verb that opens a question ("Were they damaged?").
_WE_ARE = re.compile(r"\bwe['’]re\b")
#: The marks an accented letter decomposes into ("é" is "e" and an acute accent).
_TURKIC = str.maketrans({"\u0131": "i", "\u0259": "e"})
_ACCENT = re.compile(r"[\u0300-\u036f]")


@functools.lru_cache(maxsize=256)
def _normalise(text: str) -> str:
    """" what s your budget " -> " whats your budget ": lower case, apostrophes dropped inside words,
    every other run of non-alphanumerics one space, shorthand expanded, with a space at each end; accents dropped
    ("Qué talla" -> " que talla "), so a word with one stays one word."""
    lowered = _UNIT.sub(lambda m: " " + _UNITS[(m.group(1) or m.group(2)).lower()] + " ", text).lower()
    if not lowered.isascii():
        # (and the Turkic letters with no accent to drop: "canım" -> "canim", "çox" -> "cox", "əla" -> "ela")
        lowered = _ACCENT.sub("", unicodedata.normalize("NFD", lowered)).translate(_TURKIC)
    lowered = _APOSTROPHE.sub("", _WE_ARE.sub("we are", lowered))
    words = [_SHORTHAND.get(w, w) for w in _WORD.findall(lowered)]
    return " " + " ".join(words) + " "


@functools.lru_cache(maxsize=1 << 12)
def _phrase(text: str) -> str:
    """``text`` as a phrase to find in normalised text (kept: an episode's item names are read on every message)."""
    return " " + " ".join(split_words(text)) + " "


def _with_plurals(phrases: tuple[str, ...]) -> tuple[str, ...]:
    out = []
    for p in phrases:
        norm = _phrase(p)
        out.append(norm)
        if not norm.endswith("s "):
            out.append(norm[:-1] + "s ")
    return tuple(dict.fromkeys(out))


_TOPIC_PHRASES = {topic: _with_plurals(cues) for topic, cues in _TOPIC_CUES.items()}
_VARIANT_PHRASES = _with_plurals(_GENERIC_VARIANT)
_OPEN_STRONG_PHRASES = _with_plurals(_OPEN_STRONG)
_OPEN_WEAK_PHRASES = _with_plurals(_OPEN_WEAK)
#: "What do you ...?", "What would you ...?": asks the shopper what they want, when nothing narrower is asked.
_WHAT_YOU = re.compile(r"^ (?:so |ok |okay |right |and |then )?what (?:do|would|will|are|did|should|can|could) you ")
_RULE_OUT = re.compile(r" rule (?:[a-z0-9]+ ){1,3}out ")
#: "How do you picture using it?", "how might you use it?": how the item will be used.
_HOW_USE = re.compile(r" how (?:do|will|would|might|are|could) you (?:[a-z]+ ){0,2}(?:use|using) ")
#: "What should the replacement have?", "what would a good one need to do?": what the item must be or do.
_WHAT_MUST_IT = re.compile(r" what (?:should|must|would|does|do|will|can|could|has) (?:[a-z0-9]+ ){1,4}?(?:have|need|"
                           r"needs|include|offer|do|be like|feature|come with|look like|be good at|be good for|be able to|be great at|excel at)(?: to (?:have|do|be|offer))? ")
_BARE_GO_AHEAD = frozenset(("should i", "shall i", "can i", "could i", "may i", "should we", "shall we", "do i", "do we",
                            "everything good", "everything fine", "everything ok", "everything okay",
                            # a bare check after the agent says what it will do ("I can do the return now. You agree?")
                            "you agree", "do you agree", "agreed", "it is fine", "is it fine", "it is ok", "is it ok",
                            "it is okay", "is it okay", "that is fine", "is that fine", "is that ok", "is that okay",
                            "you are ok", "you are okay", "are you ok", "are you okay", "you ok", "you okay", "both good",
                            "both ok", "both okay"))
_MORE_TO_ADD = re.compile(r" (?:anything|something|more|else|requirements?|details?|preferences?|needs|wishes|points?|"
                          r"things?)(?: [a-z0-9]+){0,3} to add | add (?:anything|something|more) |"
                          # "Is there anything else I can add to this request?": more to note, no item to add
                          r" (?:anything|something) (?:else |more )?(?:i|we) (?:can|could|should|may|might) add to (?:this|the|"
                          r"your) (?:request|search|brief|list|requirements|notes) ")
#: "Tell me a bit about how you work", "Talk me through what didn't work": a request to be told about anything, with
#: no topic named, asks openly (not "tell me when you're ready", "let me know if ...").
_TELL_ABOUT = re.compile(r"^ (?:please )?(?:tell|talk|walk|run|take|fill) (?:me|us) (?:a bit |a little |more |some more |all )?"
                         r"(?:about|through|in on|what|how|why) ")
#: "How do you like your t-shirts?": the whole sentence asks how the customer likes the item.
_HOW_LIKE = re.compile(r"^ (?:so |and )?how (?:do|would) you (?:like|want|prefer) (?:your|the|them|it|these|those)(?: [a-z0-9]+){0,2} $")
#: "What's the lamp going to light up?", "What is it gonna be doing?": what the item will do.
_GOING_TO = re.compile(r"^ (?:so |and |ok |okay )?(?:what|whats|what is) (?:the |your |this |it |they |these |that )?(?:[a-z]+ )?"
                       r"(?:going to|gonna|meant to|supposed to) ")
#: "What's the lamp for?", "Who is it for?": what the item is for.
_WHAT_FOR = re.compile(r"^ (?:so |and |ok |okay )?(?:what|whats|who|whos)(?: [a-z0-9]+){1,4} for"
                       r"(?: today| exactly| then| now| here| mainly| mostly)? $")
#: Example markers: the topics after one illustrate an open question before it ("What matters most, e.g. price?").
_EXAMPLES = re.compile(r"\be\.?g\b|\bfor example\b|\bfor instance\b|\bsuch as\b|\bthings like\b|,\s*like\b|:|\(|\u2014|\u2013|\s-\s",
                       re.IGNORECASE)
#: Words by which a question refers to the order line the customer means (with their orders in play): the
#: item ("it", "the one", its name), when it came, more about it.
_LINE_REFERENCE = tuple(f" {w} " for w in (
    "it", "its", "one", "ones", "item", "items", "product", "products", "thing", "purchase", "purchases", "bought",
    "receipt", "name", "called", "recent", "latest", "last", "earlier", "later", "month", "week", "weeks", "days",
    "ago", "specific", "detail", "details", "info", "information", "yours", "delivered", "received", "receive",
    "arrived", "shipped", "account"))
#: A month named in a question about past orders ("was it in July or August?").
_MONTH_WORDS = tuple(f" {m} " for m in _LINE_MONTHS)
_CONFIRM_PHRASES = tuple(_phrase(p) for p in _CONFIRM)
_WHICH_PHRASES = _with_plurals(_WHICH)
#: The which-phrases that only describe a line ("the order from ...", "placed on ...", "your most recent order"): in a
#: go-ahead they name what the step is about, they do not ask which line is meant.
_WHICH_DESCRIBES = ("order from", "order placed", "placed on", "ordered in", "ordered on", "the one delivered",
                    "the one you ordered", "recent order", "when you ordered", "when you bought", "when you placed",
                    "was it ordered", "in your history", "find the right", "the right order", "exact item")
_WHICH_ASKS_PHRASES = _with_plurals(tuple(p for p in _WHICH if p not in _WHICH_DESCRIBES))
#: The which-phrases that name the order or item itself (not "which of these", "which is it", that a list of reasons
#: may ask too).
_WHICH_ORDER_PHRASES = tuple(p for p in _WHICH_PHRASES if p.strip() not in ("which of these", "which is it"))
_WHICH_PAST_PHRASES = _with_plurals(_WHICH_PAST)
_REASON_PHRASES = tuple(_phrase(p) for p in _REASON)
_REASON_ASK_PHRASES = tuple(_phrase(p) for p in _REASON_ASKS)
_REASON_STATE_PHRASES = tuple(_phrase(p) for p in _REASON_STATES)
_WAIVE_PHRASES = tuple(_phrase(p) for p in _WAIVES)
_STATING_PHRASES = tuple(_phrase(p) for p in _STATING_OPENINGS)
_STOCK_OUT_PHRASES = tuple(_phrase(p) for p in _STOCK_OUT)
_REQUEST_PHRASES = tuple(_phrase(p) for p in _REQUEST_START)


def _typo_index() -> dict[str, str]:
    """Every one-letter deletion of each cue word and store value of five letters or more -> the word (symmetric
    deletion: a message word one edit away from a cue word shares a deletion with it)."""
    store_values = tuple(_phrase(v) for values in CATEGORICAL_ATTRIBUTES.values() for v in values)  # "cotten", "linnen"
    words = sorted({w for phrases in (*_TOPIC_PHRASES.values(), _OPEN_STRONG_PHRASES, _OPEN_WEAK_PHRASES,
                                      _CONFIRM_PHRASES, _WHICH_PHRASES, _REASON_PHRASES, _VARIANT_PHRASES, store_values)
                    for p in phrases for w in p.split() if len(w) >= 5 and w.isalpha()})
    index: dict[str, str] = {}
    for w in words:
        for i in range(len(w)):
            index.setdefault(w[:i] + w[i + 1:], w)
    return index


_TYPO_INDEX = _typo_index()
_CUE_WORDS = frozenset(_TYPO_INDEX.values())
#: The words of the store's values ("linen"): a slip with a letter too many is read as one only for these.
_VALUE_WORDS = frozenset(w for values in CATEGORICAL_ATTRIBUTES.values() for v in values for w in _phrase(v).split()
                         if len(w) >= 5 and w.isalpha())


@functools.lru_cache(maxsize=1)
def _known_words() -> frozenset[str]:
    """English words of the shipped embedder's vocabulary (about 22,000): a real word ("reference", "eight")
    is never taken for a slip of a cue word ("preference", "weight")."""
    vocab = json.loads(_VOCABULARY.read_text(encoding="utf-8"))["model"]["vocab"]
    return frozenset(w for w in vocab if w.isascii() and w.isalpha())


#: What a contraction adds to a word once its apostrophe is dropped ("that's" -> "thats", "wouldn't" -> "wouldnt").
#: After any word: "'s" and "n't"; after a pronoun: "'d", "'ll", "'re", "'ve", "'m".
_PRONOUNS = frozenset(("i", "you", "we", "they", "he", "she", "it", "that", "there", "who", "what"))
_PRONOUN_ENDINGS = ("re", "ve", "ll", "d", "m")


def _contraction(word: str) -> bool:
    """Whether a normalised word is a contraction ("thats", "wouldnt", "youre"): no slip of a cue word
    ("thats" is not "whats"); a slip with a known stem ("deliverd") is still one."""
    return (any(word.endswith(end) and word[:-len(end)] in _known_words() for end in ("s", "nt"))
            or any(word.endswith(end) and word[:-len(end)] in _PRONOUNS for end in _PRONOUN_ENDINGS))


def _corrected(text: str) -> str:
    """``text`` (normalised) with each word one edit from a cue word replaced by it ("colur" -> "colour")."""
    words = text.split()
    changed = False
    for i, w in enumerate(words):
        fixed = _correction(w) if len(w) >= 4 else None
        if fixed is not None:
            words[i], changed = fixed, True
    return " " + " ".join(words) + " " if changed else text


@functools.lru_cache(maxsize=1 << 14)
def _correction(w: str) -> str | None:
    """The cue word that normalised word ``w`` is a slip of (None: none), for :func:`_corrected`: worked out
    once per word (a message's words recur across messages and the clauses of one)."""
    if len(w) < 4 or w in _CUE_WORDS or not w.isalpha() or w in _known_words() or _contraction(w):
        return None
    fixed = _TYPO_INDEX.get(w)
    if len(w) == 4:
        # a four-letter word only as a letter dropped from a cue word ("brnd", "hevy"), not as a cue word's singular
        # ("snug" of "snugs")
        return None if fixed == w + "s" else fixed
    if fixed is None:
        for j in range(len(w)):
            shorter = w[:j] + w[j + 1:]
            fixed = shorter if shorter in _VALUE_WORDS else _TYPO_INDEX.get(shorter)  # "linnen": a letter too many
            if fixed is not None:
                break
    if fixed is None or not _near(w, fixed) or _inflected_other_word(w, fixed):
        return None
    return fixed


def _near(w: str, fixed: str) -> bool:
    """Whether ``w`` is a slip of cue word ``fixed`` (or of its singular): one edit, or its letters in another order
    ("matieral"). The deletion index also pairs words a letter apart at both ends ("brate", a greeting, and "rated")."""
    return (one_typo(w, fixed) or (fixed.endswith("s") and one_typo(w, fixed[:-1]))
            or (len(w) == len(fixed) and sorted(w) == sorted(fixed)))


def _inflected_other_word(w: str, fixed: str) -> bool:
    """Whether ``w`` is the "-ing" or "-ed" form of a known word other than the cue word ``fixed`` ("lacing" of
    "lace", not "acting"; "misting" of "mist", not "missing"); "shiping" is still a slip of "shipping"."""
    for ending in ("ing", "ed"):
        stem = w[:-len(ending)]
        if w.endswith(ending) and not fixed.startswith(stem) and (stem in _known_words() or stem + "e" in _known_words()):
            return True
    return False


def _has(text: str, phrases: tuple[str, ...]) -> bool:
    """Whether ``text`` holds any of ``phrases`` (``any(p in text for p in phrases)``), by one pattern."""
    return _any_of(phrases).search(text) is not None


#: Each phrase tuple's pattern (:func:`_any_of`), by the tuple's identity: a tuple does not keep its hash, and hashing
#: the hundreds of open-question phrases took longer than the search. The tuple is kept with its pattern, so no
#: other object can have its id meanwhile.
_PATTERNS: dict[int, tuple[tuple[str, ...], re.Pattern[str]]] = {}


def _any_of(phrases: tuple[str, ...]) -> re.Pattern[str]:
    """A pattern that finds any of the literal ``phrases``, compiled once per tuple."""
    kept = _PATTERNS.get(id(phrases))
    if kept is None:
        if len(_PATTERNS) >= 256:  # tuples made on the fly: start over rather than grow
            _PATTERNS.clear()
        kept = _PATTERNS[id(phrases)] = (phrases, _trie_pattern(phrases))
    return kept[1]


def _trie_pattern(phrases: tuple[str, ...]) -> re.Pattern[str]:
    """The phrases as a trie of alternatives (" colo(?:r|ur)", ...), so that a search reads the text once
    instead of once per phrase."""
    trie: dict[str, Any] = {}
    for phrase in phrases:
        node = trie
        for char in phrase:
            node = node.setdefault(char, {})
        node[""] = {}  # a phrase ends here: what extends it is found through it

    def pattern(node: dict[str, Any]) -> str:
        if "" in node:
            return ""
        branches = [re.escape(char) + pattern(node[char]) for char in sorted(node)]
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return re.compile(pattern(trie) if phrases else "(?!)")


@dataclass(frozen=True)
class InPlay:
    """The values a message may name: the items under discussion, each topic's values (a CART item's
    variant values, a category's brands and attribute vocabularies), the dates of the customer's orders."""

    items: tuple[ItemNames, ...] = ()
    values: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    dates: tuple[str, ...] = ()

    def value_index(self) -> dict[str, tuple[tuple[str, str, bool], ...]]:
        """Each value's first word -> (topic, normalised phrase, whether it must appear in capitals), built
        once: a message is matched word by word, so a category's thousand brands cost no more than ten."""
        cached = self.__dict__.get("_index")
        if cached is None:
            index: dict[str, list[tuple[str, str, bool]]] = {}
            for topic, values in self.values.items():
                for value in values:
                    # as written ("Slate Grey") and as a normalised message spells it ("slate gray")
                    written = _phrase(value)
                    for phrase in dict.fromkeys((written, " " + " ".join(_SHORTHAND.get(w, w) for w in written.split()) + " ")):
                        if phrase.strip():
                            index.setdefault(phrase.split()[0], []).append((topic, phrase, _needs_capitals(value)))
            # a compound value said by its head word ("steel" for Stainless Steel, "iron" for Cast Iron), where no
            # value starts with that word (not brands: their last words are no names of their own)
            for topic, values in self.values.items():
                for value in values if topic != "brand" else ():
                    head = _phrase(value).split()[-1:]
                    if len(_phrase(value).split()) >= 2 and head[0].isalpha() and len(head[0]) >= 4 and head[0] not in index:
                        index.setdefault(head[0], []).append((topic, f" {head[0]} ", False))
            cached = {word: tuple(entries) for word, entries in index.items()}
            object.__setattr__(self, "_index", cached)
        return cached

    def date_keys(self) -> frozenset[str]:
        cached = self.__dict__.get("_dates")
        if cached is None:
            cached = frozenset(k for d in self.dates for k in _date_keys(_phrase(d)))
            object.__setattr__(self, "_dates", cached)
        return cached


NOTHING_IN_PLAY = InPlay()
#: The store's attribute vocabularies: a value of one names its topic wherever it is said.
STORE_VALUES = InPlay(values={TOPIC_OF_ATTRIBUTE[attribute]: values for attribute, values in CATEGORICAL_ATTRIBUTES.items()})


def _needs_capitals(value: str) -> bool:
    """A one-letter size ("M", "S", "L") counts only written as a capital on its own, not "m" in "I'm"."""
    return len(value.strip()) <= 1 and value.strip().isalpha()


def _date_keys(text: str) -> list[str]:
    """"month day" keys of every date written in normalised ``text`` ("sept 10", "10 september", "september 10th")."""
    words = text.split()
    keys = []
    for i, w in enumerate(words):
        month = w if w in _MONTHS else _MONTH_ABBREVIATIONS.get(w)
        if month is None:
            continue
        for j in (i + 1, i - 1):
            if 0 <= j < len(words):
                m = _DAY.match(words[j])
                if m and 1 <= int(m.group(1)) <= 31:
                    keys.append(f"{month} {int(m.group(1))}")
                    break
    return keys


@dataclass(frozen=True)
class Reading:
    """What one agent message asks the shopper (never a value: the shopper decides what to say)."""

    asks: bool  # a question or a request to the shopper
    topics: frozenset[str] = frozenset()  # requirement topics asked about (TOPICS, or VARIANT)
    open: bool = False  # asks for any further requirement
    confirm: bool = False  # asks the shopper's go-ahead
    which: bool = False  # asks which order or item the customer means
    reason: bool = False  # asks why the customer returns the item
    stock_out: bool = False  # announces that something is out of stock
    items: tuple[int, ...] = ()  # indices of the in-play items the message names

    @property
    def asks_anything(self) -> bool:
        """Whether it asks something the shopper can answer."""
        return bool(self.topics or self.open or self.confirm or self.which or self.reason)


_ANYTHING = (" anything ", " any ", " is there anything ", " is there something ")


def _sentences(raw: str) -> list[str]:
    """The normalised sentences of ``raw``."""
    return [_normalise(part) for part in re.split(r"[.!?;,:\n\u2013\u2014]+|\s-\s", raw) if part and part.strip()]


#: A sentence: up to a stop that ends one (not the points of "e.g.", "i.e." or "$12.99").
_SENTENCE = re.compile(r"(?:[^.!?\n]|\.(?=[^\s.!?])|(?<=\b[a-z])\.)+[.!?]*")
_CLAUSE_BREAK = re.compile(r"[,;:\u2013\u2014]|\s-\s")
#: A clause opening with one of these asks for a fact, not leave to act ("Where should I start?"), unless
#: it proposes ("How about I place it?", "What if I check out now?").
_WH_WORDS = frozenset(("what", "whats", "which", "where", "how", "why", "when", "who"))
#: The word after a question word that makes the clause a proposal ("How about ...", "What if ...", "Why not ...").
_WH_PROPOSING = ("about", "if", "not", "dont")


def _opens_with_wh(words: str) -> bool:
    """Whether a normalised clause opens with a question word, after the words that open any clause."""
    first = _FILLER.sub(" ", words).split()[:1]
    return bool(first) and first[0] in _WH_WORDS


_MEANING = re.compile(r" (?:how|what) do you mean ")
_PAST_AUXILIARIES = frozenset(("did", "have", "had", "were", "was"))
#: A short question that is only an action on the item ("Order it?", "Check out now?", "Return them?").
_BARE_ACTION = re.compile(r"^ (?:so |ok |okay |right |then |just )?(?:i |we )?" + _ACTIONS + r" (?:it|them|this|that|these|those|"
                          r"now|ahead|through|up|out|the order|the return|(?:the|your) [a-z0-9]+(?: [a-z0-9]+)? for you)(?: [a-z0-9]+){0,2}"
                          r"(?: for (?:you|a new one|another one|a replacement|a fresh one))? $")


#: A shipping verb as the step asked leave for ("Ship it?", "Dispatch the order?"): no topic.
#: The agent's own shipping as the step it takes ("what screen size are we shipping for you?", "Are we shipping this or
#: what?"): no delivery wish asked (not "when are we shipping it?").
_WE_SHIPPING = re.compile(r" (?:are|were|am) (?:we|i) (?:shipping|sending|dispatching)(?= (?:for you|to you|this|that|it|these|"
                          r"those|them|or)\b)")
#: Paying as the step leave is asked for ("All set to pay?", "Ready to pay for it?", "We proceed to pay?", "Pay now
#: ok?", "Ready for pay?", "Good to exit and pay?"): no budget asked.
_PAY_STEP = re.compile(r" (?:(?:set|ready|good|ok|okay|clear|cleared|proceed|go|move|continue) to pay|(?:can|i|we) pay now|"
                       r"(?:ready|set|good) for (?:pay|payment|paying)|(?:exit |check out |checkout )?and pay(?= $| now )|"
                       r"^ pay now|(?:confirm|ok|okay) (?:i |we |you )?can pay)(?: for (?:it|them|this|that|these|those|the order))? ")
#: Shipping as what follows the go-ahead ("Say the word and the Swift 2 ships today.", "... a yes, and it ships"): no
#: delivery wish asked.
_SHIPS_AFTER = re.compile(r" (?:and|then|so) (?:the [a-z0-9]+(?: [a-z0-9]+)? |it |they |your order |the order |its |theyre )?(?:ships|"
                          r"will ship|ll ship|goes out|is on its way|shipped)(?: out)?(?: today| now| tonight| right away| "
                          r"straight away| immediately)? ")
#: The paper a step fills in ("Everything look correct on the form?", "the return form"): no product form asked.
_PAPER_FORM = re.compile(r" (?:on|in|onto|into) the form | the (?:return|refund|order|claim|request|returns) form ")
_WHEN_PHRASES = (" when ", " whens ", " how soon ", " how fast ", " how quickly ", " by what ", " by which ")
_SHIP_STEP = re.compile(r" (?:ship|dispatch|despatch)(?= (?:it|them|this|that|these|those|the|your|now|out)\b)")
#: The agent's step said with a modal and a tag ("We can start the return now, can't we?") or with "now" in a question
#: of other word order ("The refund I make now or later?"): leave asked to act.
_STEP_TAG = re.compile(r" (?:i|we) (?:can|could|should|shall|will|ll|may) (?:just |now |then |go ahead and )?" + _ACTIONS
                       + r"(?:s|ing)? (?:[a-z0-9]+ )*?(?:cant|cannot|couldnt|shouldnt|shall|can|should|wont|will|shant) (?:we|i) $")
#: The step asked in chat as what "we" are doing ("we buying it or nah", "so we locking this in?").
_WE_DOING = re.compile(r"^ (?:so |ok |okay |yo |then )?(?:are )?we (?:just |still |actually )?(?:buy|plac|check|order|lock|go|finish|"
                       r"wrap|send|submitt|do|ring|process|complet|finali[sz]|proceed|start|return|hitt)(?:ing|in)(?: [a-z0-9]+){0,4}"
                       r" (?:or (?:not|nah|no|what)|yes|yeah|right) $")
#: The agent's step asked with the verb last ("Should I the order now send?", "Shall we it today order?").
_MODAL_STEP = re.compile(r"^ (?:(?!what|which|how|when|where|who|why)[a-z]+ ){1,6}(?:i|we) (?:may|can|shall|should|could) " + _ACTIONS
                         + r"(?: it| them| this| that)? $")
#: The agent's step asked in the present tense, its subject first ("I order the ceramic mug?", "We continue to pay?"), or
#: the cart said ready for paying ("Ready for pay?"): leave asked (not "We start with the colour?").
_FIRST_PERSON_STEP = re.compile(r"^ (?:so |ok |okay |then |now |and )?(?:i|we) (?:now |then |just )?" + _ACTIONS
                                + r" (?:it|them|this|that|these|those|the|your|to|now|ahead|out|up|through)(?: [a-z0-9]+){0,6} $|"
                                r"^ (?:all )?(?:ready|set|good) for (?:pay|payment|paying|checkout|check out) $")
_VERB_LAST = re.compile(r"^ (?:so |ok |okay |then )?(?:shall|should|can|may|must) (?:i|we) (?:[a-z0-9]+ ){1,4}" + _ACTIONS + r" $")
_STEP_NOW = re.compile(r"^ (?:[a-z]+ ){0,6}(?:i|we) (?:now )?(?:(?:am|are) (?:allowed|able|free|ok|okay) to )?(?:do|" + _ACTIONS + ")" + r"(?:s)?(?: [a-z0-9]+){0,3} (?:(?:now|today|right away|"
                       r"straight away)(?: or (?:later|tomorrow|wait|not))?|or (?:we |i )?(?:wait|hold off|later|not)) $")


#: Waiting the customer does not want ("You don't want me to hold off on the order, do you?"): leave asked to go on.
_NOT_WAIT = re.compile(r" (?:dont|do not|wouldnt|would not) (?:want|need|like) (?:me|us) to (?:hold off|hold on|hold back|wait|"
                       r"delay|hang on|put off|pause|hold fire)\b|"
                       # holding off the decision itself ("You're not wanting to wait on this, are you?")
                       r" (?:not|dont|do not) (?:want|wanting|need|needing) to (?:wait|hold off) on (?:this|it|that|the order)\b")


_THEN_TAG = re.compile(r",\s*(?:then|now|eh)\s*\?")
#: A closing tag of one word in another language's or a dialect's way ("I put the order now, no?", "I validate the
#: order, d'accord?", "It's good like this, inshallah?"): the question mark belongs to the clause before it, whose step
#: then asks leave as "I put the order now?" does. A value checked this way asks no leave ("Navy, no?": no step).
_WORD_TAG = re.compile(r",\s*(?:no|si|ja|oui|d['\u2019]?accord|inshallah|innit|hein|va bene|na|ne|ya|yeah)\s*\?", re.IGNORECASE)
#: The agent's step said bare in the first person, as a question ("I continue?", "We proceed?", "I go ahead now?"; not
#: "I continue to check stock." without its mark, nor "Do I continue reading the list?").
_BARE_STEP = re.compile(r"^ (?:so |ok |okay |then |and )?(?:i|we) (?:now |then |just )?(?:continue|proceed|go ahead|go on|"
                        r"carry on|finish|finali[sz]e|check out|checkout|pay|validate|confirm|order)(?: (?:now|then|here))? $")
#: The customer's own purchase, said without an auxiliary ("You buy it when?", "When'd ya buy it?"): what they did.
_CUSTOMER_BOUGHT = re.compile(r"(?:^| whend| whens| when| remember) (?:you|ya) (?:buy|bought|order|ordered|purchase|purchased|get|"
                              r"got) (?:it|them|this|that|these|those)\b")
#: Leave asked for the step just offered, named only as doing it ("I can send a replacement. Should I do it?").
_DO_IT = re.compile(r"^ (?:so |then |ok |okay )?(?:should|shall|can|could|may) (?:i|we) (?:go ahead and )?do (?:it|that|this|so)"
                    r"(?: now| then| for you)? $")

#: The go-ahead asked as what to reply ("Reply YES to place it, NO to cancel.", "Type CONFIRM to proceed.", "1 =
#: Checkout, 2 = Keep shopping", "... y/n"): a form's or a chatbot's way to ask leave for the step the key stands for.
_REPLY_GO_AHEAD = re.compile(r"^ (?:(?:please|kindly|just|simply|now|so|then) )*(?:reply|respond|type|text|send|enter|press|write|"
                             r"hit|click|tap|say|answer)(?: with)? [a-z0-9]+ (?:to|and|if you want (?:me )?to) (?:go ahead and )?"
                             + _ACTIONS + r"(?:s|ing)? ")
_MENU_GO_AHEAD = re.compile(r"(?:^|\s)1\s*(?:=|\))\s*(?:checkout|check out|confirm|proceed|place (?:the )?order|submit|buy now|"
                            r"pay)\b", re.IGNORECASE)
_YES_NO_END = re.compile(r" (?:y n|yes no) $")
_STEP_FIRST = re.compile(r"^ (?:so |ok |okay |then |just )?" + _ACTIONS + " ")
#: An instruction to pick or reply ("Pick one.", "Reply 1 for XS, 2 for M", "Select brightness: ..."): it asks among the
#: values it lists or follows (not "pick up", "pick out" or "select models").
_PICK_REQUEST = re.compile(r"^ (?:(?:please|kindly|just|simply|now|so|then|ok|okay|oya|go on) )*(?:(?:select|choose|pick)(?! up\b| out\b|"
                           r" models?\b| items?\b| styles?\b)\b|(?:reply|respond|type|enter|press|text)(?: with)? (?:(?:a |the |your )?"
                           r"(?:number|letter|[a-z0-9]) (?:for|to)\b|(?:a |the |your )?(?:number|letter|choice|quantity|size|colou?r|"
                           r"order|date|budget)\b)|(?:drop|make|take|name) your (?:pick|choice)\b)")

#: The shopper's go-ahead as what the agent still needs or awaits ("I need only your assent and it goes through", "Your
#: return now awaits only your approval", "only your approval is needed", "All I need is your yes"): leave asked, though
#: said as a statement, or as the word to say ("Say aye and the refund goes through.", 'To confirm your order, say
#: "confirm."'); not a go-ahead the agent does without ("We don't need your approval for that").
_CONSENT = (r"(?:agreement|approval|approve|assent|yes|say so|go ahead|accord|consent|confirmation|ok|okay|nod|permission|"
            r"authori[sz]ation|green light|greenlight|blessing|sign off|thumbs up)")
_CONSENT_NEEDED = re.compile(r"(?<! dont)(?<! do not)(?<! no)(?<! not)(?<! wont)(?<! without) (?:need|needs|require|requires|"
                             r"await|awaits|awaiting|wait for|waiting for|waiting on|ask|ask for|request|seek) (?:(?:now|still|"
                             r"just|only|simply|merely|from you|of you|is|are) )*(?:your|a) (?:[a-z]+ ){0,2}?" + _CONSENT + r" (?!or )|"
                             r"(?<! dont)(?<! do not)(?<! no)(?<! not) need (?:that )?you (?:to )?(?:say|give|type) (?:yes|aye|ok|okay|the word|so) |"
                             r"^ (?:(?:to|for) (?:[a-z0-9]+ ){1,5}?)?(?:just |simply |only |please |now )*(?:say (?:yes|aye|ok|okay|"
                             r"the (?:magic )?word|confirm|go ahead|so)|give (?:me |us )?the (?:signal|word|nod|go ahead|"
                             r"green light|greenlight|thumbs up)|sign (?:it )?off(?: on (?:it|this|that|them|the order))?)(?: and .*)? $|"
                             # ... the customer's word as what the step waits on ("I await but thy word to order the Swift
                             # 2.", "I'll order it on your word.")
                             # ... or as what the agent would be grateful for ("I should be grateful for your permission to
                             # complete the purchase.")
                             r" (?:grateful|obliged|thankful) for (?:your|a) (?:[a-z]+ ){0,2}?" + _CONSENT + r" (?!or )|"
                             r"(?<! dont)(?<! do not)(?<! no)(?<! not) (?:await|awaiting|wait for|waiting for|need|require) "
                             r"(?:but |only |just )?(?:your|sirs|madams) (?:word|say so) (?:to|and|before) |"
                             r" (?:i will|ill|we will|well|i shall|we shall) " + _ACTIONS + r" (?:it|them|this|that|these|those|the order)(?: now)? "
                             r"(?:on|at|with) your (?:word|say so|signal|nod|command) |"
                             # ... awaited with no article before an action ("Awaiting authorisation to transmit order.")
                             r"^ (?:[a-z0-9]+ ){0,4}?(?:awaiting|waiting for|waiting on|need|needs|require|requires|requesting|"
                             r"seeking|request|seek) (?:authori[sz]ation|approval|consent|permission|confirmation) to [a-z]+ |"
                             r"^ (?:[a-z]+ ){0,3}?(?:only |just )?(?:your|a) (?:[a-z]+ )?" + _CONSENT + r" (?:is|are) (?:still |now |"
                             r"only |all )?(?:needed|required|missing|wanted|awaited|outstanding|pending|left) |"
                             # ... said last, as all that is missing ("All that's missing is your say-so.", "The only thing
                             # I need now is your OK.")
                             r"(?:^ | but )(?:[a-z]+ ){0,2}?(?:all|the only thing|only thing|one thing) (?:thats |that is |that s |i |we )?"
                             r"(?:still )?(?:missing|needed|left|required|outstanding|need|require|lacking)(?: now| still| here)? "
                             r"(?:is|s) (?:just |only |simply )?(?:your|a) (?:[a-z]+ )?" + _CONSENT + r" |"
                             # ... and as all that is needed ("Your assent is all that is required for it to be sent.")
                             r"^ (?:[a-z]+ ){0,3}?(?:only |just )?(?:your|a) (?:[a-z]+ )?" + _CONSENT + r" (?:is|are) all (?:(?:that|what) "
                             r"(?:is |are )?|(?:that |what )?(?:i|we) )?(?:needed|required|wanted|need|require|want|await) |"
                             r" if you (?:give me|say) (?:the nod|the word|a yes|your " + _CONSENT + r") |"
                             # the consent needed, said noun first or as "the go" ("Approval needed from you before the
                             # order is submitted.", "Need the go on this one")
                             r"^ (?:(?:your|a|the) )?" + _CONSENT + r" (?:is )?(?:needed|required|awaited|pending) (?:from|of) you |"
                             r"(?<! dont)(?<! do not)(?<! no)(?<! not) (?:need|needs|require|requires|await|awaiting|"
                             r"waiting for|waiting on) (?:just |only |still )?(?:the|your) go (?!(?:to|for|at|through|over|back|"
                             r"out)\b)|"
                             # the customer's word, then the step done ("Just say yes and it's ordered.", "Nod and I'll
                             # ship it.", "A thumbs up from you and it's done!", "You say go, done.")
                             r"^ (?:(?:just|simply|only|please|now|so|you) )*(?:(?:say|tell me|type|give me|give us)(?: only| just| simply)? "
                             r"(?:yes|go|ok|okay|aye|the word|so)|nod|(?:a |the |your )?(?:nod|green light|greenlight|thumbs up|go ahead)"
                             r"(?: from you)?) (?:and |then )?(?:(?:its|it is|it will be|itll be|thats|that is|all|the [a-z0-9]+(?: [a-z0-9]+)? is|"
                             r"(?:the )?order is|it is all|i will|ill|we will|well|i can|we can) )?(?:done|sorted|ordered|placed|sent|"
                             r"submitted|booked|away|" + _ACTIONS + r")\b")

#: The customer's word, then the step done, in any idiom and without a question mark: the word said, typed, given or
#: nodded ("Give us the nod, mate, and it is yours.", "You say ok, I place order.", "Nod and it's yours.", "Your
#: word and I'll book it.", "Approve and I'll close it out.", "A thumbs up from you and it's rolling!", "You say when
#: and I press the button.", "Nod if you want it.") reads as asking leave. Near misses: the word said already ("You
#: said yes and it's ordered."), said by someone else ("They'll say yes and ..."), what the customer should tell
#: ("Tell me the size and I'll add it."), a word with no step after it ("Say yes to more colours?"), what the word is
#: for ('Say "first" for the oldest order.'), the word given before ("You say ok already, so it's placed."), and a
#: negated word ("Don't say yes until you're sure.").
_GIVEN_WORD = (r"(?:(?:say|tell|type|give|send)(?: me| us)?(?: only| just| simply| literally)? (?:me |us )?(?:a |your |the )?"
               r"(?:yes|yeah|yep|yup|go|ok|okay|aye|done|when|word|nod|go ahead|green light|greenlight|green flag|thumbs up|bet|"
               r"sure)|"
               r"nod(?: (?:your |the )?head)?|approve|"
               # ... the word as what the customer gives ("A simple yes from you, and it is done.", "One word from you and
               # the order's away.", "Green flag from you and we're away"), or the button pressed ("Hit your buzzer and ...")
               r"(?:a|the|your|one) (?:(?:simple|single|quick|little|short) )?(?:nod|green light|greenlight|green flag|thumbs up|"
               r"go ahead|word|yes|say so|ok|okay|aye)(?: from you)?|(?:green light|green flag|thumbs up) from you|"
               r"(?:hit|press|push|ring|slap) (?:your|the|that) (?:buzzer|button|bell))")
_WORD_THEN_STEP = re.compile(r"^ (?:(?:just|simply|only|literally|please|now|so|then|you|and) )*" + _GIVEN_WORD +
                             r" (?!(?:on|of|in|at|off|is|was|are|were)\b)(?!from (?:you|ya|u) (?:already|before|earlier|is|was|"
                             r"were|are|on|of|about|for|regarding|in)\b)(?!(?:[a-z]+ )?(?:already|before|earlier|for|to|or)\b)(?:(?:(?!and\b)[a-z]+ ){0,2}?(?:and |then |n )?(?:[a-z0-9]+ ){0,8}?(?:" + _DONE + r"|"
                             + _ACTIONS + r"|its|it is|itll|it will|thats|c est|bobs your uncle|yours|fini|finished|done|"
                             r"away|rolling|on its way|sorted|through)\b|if (?:you|ya) (?:want|like|agree|approve|are happy|re happy)\b)|"
                             # ... to the step itself ("Say aye to the checkout.")
                             r"^ (?:(?:just|simply|only|literally|please|now|so|then|you|and) )*(?:say|give|send)(?: me| us)? "
                             r"(?:yes|aye|ok|okay|the word|go) to (?:the |your )?(?:checkout|check out|order|purchase|sale|return|"
                             r"refund|exchange)\b")
#: The agent's own step, then the customer's word it waits on or the leave it takes: "I'll place it now, unless you
#: say stop.", "I press order when you say.", "Then I send the order off, if that is okay with you.", "I'll write up
#: the ticket if that suits." Near misses: a condition that is no consent ("I'll ship it Monday if that's when it
#: arrives.", "I'll check the size if it's in stock."), and a step already taken ("I placed it, if that's ok").
_STEP_UNLESS_WORD = re.compile(r"^ (?:(?:so|then|ok|okay|now|right|and) )*(?:i|we|ill|well)(?: will| can| shall| am going to| are going to| "
                               r"gonna)? (?:(?:now|just|then|go ahead and) )*(?:" + _ACTIONS + r"|write)(?:s)?(?: [a-z0-9]+){0,8} "
                               r"(?:unless you (?:say (?:stop|no|not|otherwise|so)|object|stop me)|when(?:ever)? you say"
                               r"(?: so| go| the word| yes)?|if (?:thats|that is|its|it is|this is|that|this|it) (?:ok|okay|alright|"
                               r"all right|fine|good|suits|works)(?: (?:with|by|for) you)?|if (?:that|this) suits(?: you)?|if you "
                               r"(?:are |re )?(?:happy|ok|okay|agree))(?: [a-z]+)? $")
#: A quoted word the customer is to say ("Tell me 'ari' and I order it.", 'Just type "done" and it ships.'): the word
#: given, whatever it is.
_QUOTED_WORD = re.compile(r"\b(say|tell|type|text|reply|sing|shout)( me| us)?( only| just)? [\"'\u2018\u201c][A-Za-z]{1,12}[\"'\u2019\u201d]",
                          re.IGNORECASE)


#: A word `_WORD_THEN_STEP`, `_STEP_UNLESS_WORD` or `_QUOTED_WORD` needs, in the raw sentence.
_WORD_STEP_HINT = re.compile(r"\b(?:say|tell|type|text|reply|give|gimme|send|nod|approve|word|yes|ok|okay|k|green|greenlight|"
                             r"sing|shout|buzzer|button|bell|signal|command|aye|"
                             r"thumbs|ahead|unless|if)\b", re.IGNORECASE)


#: The agent's step made conditional on the customer's assent, in either order and without a question mark: the
#: condition is the customer agreeing, nodding, allowing or being happy ("I send the order if you agree.", "It goes
#: through when you nod.", "If you are happy, I finish now.", "If for you it's fine, I close it."), the step done with
#: their permission or blessing ("With your permission, I am sending the order."), their word given first ("One yes
#: from you and it goes out.", "Your consent and I close.", "Give it your blessing and I shall send it.", "Say si and
#: it is yours."), or the word as all the agent awaits, said object first ("Only your agreement I need.").
#: Near misses: a step already taken ("I sent it when you agreed."), a condition on a fact ("I'll ship it if it is in
#: stock."), agreeing with something ("If you agree with the reviews, ..."), and a value to say ("Say your size and I
#: add it.").
_ASSENT_WORD = (r"(?:yes|yeah|yep|ok|okay|go|word|nod|consent|agreement|approval|blessing|permission|leave|say so|go ahead|"
                r"assent|green light|greenlight|thumbs up|signal|authori[sz]ation|confirmation)")
_ASSENT_VERB = (r"(?:agree|agreeing|agrees|nod|nods|nodding|approve|approves|consent|consents|allow|allows|allow it|accept|accepts|"
                r"confirm|confirms|sign off|okay it|ok it|say so|give (?:me |us )?(?:a|the|your) (?:[a-z]+ )?" + _ASSENT_WORD + r"|"
                r"(?:are|is|re|feel|feels) (?:happy|content|ready|okay|ok|good|fine|satisfied)|happy|say [a-z]+)")
_OK_WORD = r"(?:ok|okay|fine|good|alright|all right|right|correct|vale|bien|bene|well|yes|sim|si|ja|oui|da|ae|certo)"
_ASSENT_CONDITION = re.compile(
    r" (?:if|when|whenever|provided|provided that) (?:for )?(?:you|ya|u|the shopper|the customer|"
    r"your heart|sir|madam|the shoppers|the customers)(?: (?:just|only|now|then|do|will|are|is|re))? " + _ASSENT_VERB + r"(?! (?:with|that|on|about|to)\b)(?: [a-z]+)?(?: [a-z]+)? $|"
    # ... the summary's rightness as the condition, said to the customer ("If everything is looking correct for you,")
    r" (?:if|when) (?:for you )?(?:(?:everything|all|it|this|that|the cart|the order|its|thats|it is|that is)(?: is| s| are)?"
    r"(?: (?:looking|looks|look|seems|seem))? )?" + _OK_WORD + r"(?: (?:for|to|with) (?:you|ya|u))?(?: [a-z]+)? $|"
    r"(?:^| )with (?:your|ur|the customers|the shoppers|sirs|madams) (?:kind |good )?(?:permission|blessing|leave|approval|consent|"
    r"agreement|say so|go ahead|okay|ok|nod|assent)(?: [a-z]+)? $")
#: ... the step itself: the agent's, in the present or future, or the order's going out.
_ASSENT_STEP = re.compile(
    r"^ (?:(?:so|then|and|now|ok|okay|la|right) )*(?:(?:[a-z0-9]+ ){0,6}?(?:i|we|ill|well|id)(?: will| can| shall| am| are| could| would)?"
    r"(?: (?:now|then|just|straight|right away|go ahead and|be))?(?: [a-z]+ing)? (?:" + _ACTIONS + r"|pass|punch|seal|fire|"
    r"prepare|prepared|preparing|ring|write|open|sending|placing|finishing|closing|completing|making|starting|opening"
    r")(?:s|ing)?\b|"
    r"(?:the |your |this |that )?(?:order|return|refund|purchase|it|they|[a-z0-9]+(?: [a-z0-9]+)?)(?: s| is| will| can| shall| go)?"
    r" (?:goes|go|moves|moving|ships|shipping|rolls|rolling|proceed|proceeds|go ahead|yours|placed|sent|done|away)\b)")
_ASSENT_FIRST = re.compile(
    r"^ (?:(?:just|simply|only|please|now|so|then|you|and|kindly) )*(?:(?:(?:one|a|your|ur|just|the) )(?:(?:simple|single|quick|"
    r"little|short|small) )?" + _ASSENT_WORD + r"(?: from (?:you|ya|u))?|(?:give|lend) (?:it |this |that |me |us )?(?:your|a|the) "
    r"(?:[a-z]+ )?" + _ASSENT_WORD + r"|(?:say|talk|whisper|sing|shout|tell)(?: me| us)?(?: only| just)? (?:(?:a|one|single|simple) )*"
    r"(?P<word>[a-z]+))(?: (?:and|then|n) (?P<rest>.*)| )$")
_YES_WORDS = frozenset(("yes", "yeah", "yep", "yup", "ok", "okay", "aye", "go", "sure", "word"))
#: Words said that are no assent ("Say your size ...", "Tell me which ...", "Say hi to ...").
_NOT_ASSENT = frozenset(("your", "ur", "the", "me", "us", "it", "that", "this", "which", "what", "how", "when", "where", "why", "who",
                         "hi", "hello", "bye", "goodbye", "thanks", "no", "not", "stop", "something", "anything", "more", "again",
                         "whether", "if", "so", "about", "a", "an", "one", "to", "for", "nothing", "cheese", "all", "everything", "now",
                         "then", "later", "please", "quickly", "straight", "first", "them", "him", "her", "two",
                         "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "dozen", "couple",
                         "few", "many", "much", "some", "any", "both", "either", "neither", "less", "most", "least", "instead", "twenty",
                         "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "hundred", "thousand", "grand"))
_ASSENT_AWAITED = re.compile(
    r"^ (?:(?:so|and|now|then|la) )*(?:only|just) (?:your|ur|a|one|the) (?:[a-z]+ )?" + _ASSENT_WORD + r" (?:i|we) (?:am |are )?"
    r"(?:still )?(?:need|needing|require|requiring|want|wait for|waiting for|waiting|await|awaiting|ask|asking)\b")
#: A word `_ASSENT_CONDITION`, `_ASSENT_FIRST` or `_ASSENT_AWAITED` needs, in the raw sentence.
_ASSENT_HINT = re.compile(r"\b(?:if|when|whenever|provided|with|yes|ok|okay|go|word|nod|consent|agreement|approval|"
                          r"blessing|permission|leave|assent|say|talk|tell|whisper|sing|shout|give|lend|only|just)\b")


#: ... and a word of assent, or a word said (in the lower-cased sentence).
_ASSENT_VOCABULARY = re.compile(r"\b(?:yes|yeah|yep|ok|okay|go|word|nod|consent|agree\w*|approv\w*|blessing|permission|leave|"
                                r"assent|green|thumbs|signal|authori\w*|allow|accept|confirm|sign|happy|content|ready|fine|good|"
                                r"satisfied|alright|right|correct|vale|bien|bene|well|sim|si|ja|oui|da|ae|certo|say|talk|whisper|"
                                r"sing|shout|tell)\b")


@functools.lru_cache(maxsize=256)
def _assent_for_step(sentence: str) -> bool:
    """Whether a sentence makes the agent's next step wait on the customer's assent (`_ASSENT_CONDITION`,
    `_ASSENT_FIRST`, `_ASSENT_AWAITED`), which asks their go-ahead."""
    lowered = sentence.lower()
    if _ASSENT_VOCABULARY.search(lowered) is None or _ASSENT_HINT.search(lowered) is None:
        return False  # (a quick look for the words every form needs: a word of assent or a word said, and a form's word;
        # a message's sentence is looked at up to three times, kept for the next look)
    clauses = [_normalise(c) for c in re.split(r"[,:;\u2013\u2014]|\s-\s", sentence)]
    clauses = [c for c in clauses if c.strip()]
    for i, words in enumerate(clauses):
        if _ASSENT_AWAITED.match(words):
            return True
        first = _ASSENT_FIRST.match(words)
        word = first and first.group("word")
        if first and not (word and (word in _NOT_ASSENT or word in _CUE_WORDS or word in _VALUE_WORDS or word in _ASKED_WORDS
                                    or re.search(r"(?<=\s)" + word.capitalize() + r"\b", sentence))):
            # (a word said has its step in its own clause, "Say si and it is yours."; a yes, or a word given in other
            # words, may have it in the next, "Say yes, and it is yours.", "One yes from you, and it goes out.")
            rest = [" " + first.group("rest")] if first.group("rest") else [] if word and word not in _YES_WORDS else clauses[i + 1:i + 3]
            if any(_ASSENT_STEP.match(c) and not _PAST_STEP.search(c) for c in rest):
                return True  # "One yes from you and it goes out.", "Say si, I send the order."
        condition = _ASSENT_CONDITION.search(words)
        if condition is None:
            continue
        said = re.search(r" say ([a-z]+) ", condition.group())
        if said and (said.group(1) in _NOT_ASSENT or said.group(1) in _CUE_WORDS or said.group(1) in _VALUE_WORDS):
            continue  # "I'll add it if you say which size.", "... if you say black": a value to say, no assent
        step = words[:condition.start() + 1]
        others = ([step] if step.strip() else []) + clauses[i + 1:] + clauses[:i]
        if any(_ASSENT_STEP.match(c) and not _PAST_STEP.search(c) for c in others):
            return True  # "I send the order if you agree.", "If your heart is happy, I send it."
    return False


#: Words of what the customer is asked to tell (a reason, a need, an order's date): said, they answer, they assent to
#: nothing ("You say the reason, I write it.").
_ASKED_WORDS = frozenset(w for p in (*_REASON_ASKS, *_REASON_STATES, *_OPEN_STRONG, *_OPEN_WEAK, *_WHICH, *_MONTH_NAMES,
                                     "date", "day", "problem", "fault", "issue", "detail", "need", "wish", "choice", "pick")
                         for w in p.split() if len(w) > 2 and w not in ("yes", "okay"))
#: A step already taken ("I sent it", "it was placed"): no leave asked for it.
_PAST_STEP = re.compile(r" (?:i|we) (?:have |had |already )?(?:[a-z]+ed|sent|put|made|set|paid|began|begun|got|rang|wrote) |"
                        r" (?:was|were|has been|have been|already) ")


#: The step taken on the customer's word, signal or command ("I'll put it through on your signal.", "The order moves out
#: on your word.", "Ready to check out on your command."), not on a value of theirs ("on your size").
_ON_YOUR_WORD = re.compile(r" on (?:your|ur|sirs|madams) (?:word|signal|command|say so|nod|go|mark|orders)(?: [a-z]+)? $")
_ON_YOUR_HINT = re.compile(r"\bon (?:your|ur|sir|madam)", re.IGNORECASE)
#: ... but not a step already taken on it ("Order engaged on your command.", "Placed on your word.").
_DONE_ON_WORD = re.compile(r"(?:ed|done|sent|put|set|gone|begun) (?:[a-z]+ )?on (?:your|ur|sirs|madams) ")


def _gives_word_for_step(sentence: str) -> bool:
    """Whether a sentence asks the customer's word for the agent's step as a statement (`_WORD_THEN_STEP`,
    `_STEP_UNLESS_WORD`), from its start or after a heading ("Cable return: nod and I'll sort it.")."""
    if _assent_for_step(sentence):
        return True  # "I send the order if you agree.", "With your permission, I am sending it.", "Only your yes I need."
    if _WORD_STEP_HINT.search(sentence) is None:
        return False  # (a quick look for the words both need: most sentences have none)
    sentence = _QUOTED_WORD.sub(r"\1\2\3 yes", sentence)
    parts = re.split(r"[,:\u2013\u2014]|\s-\s", sentence)
    for part in (sentence, *parts) if len(parts) > 1 else parts:
        words = _corrected(_normalise(part))
        if _WORD_THEN_STEP.match(words) or _STEP_UNLESS_WORD.match(words):
            return True
    if _ON_YOUR_HINT.search(sentence) is None:
        return False
    words = _corrected(_normalise(sentence))
    if _ON_YOUR_WORD.search(words) and (_ACTION_WORD.search(words) or " order " in words) and not _DONE_ON_WORD.search(words):
        return True  # "I'll put it through on your signal.", "The order moves out on your word."
    return False


def _asks_go_ahead(asking: str) -> bool:
    """Whether a clause of the asking sentences asks the shopper's go-ahead ("Can I finalize it?", "ok to
    proceed?", "Shall I start the return?"), not what to do ("Where should I start?")."""
    asking = _WORD_TAG.sub("?", asking)
    for sentence in _SENTENCE.findall(asking):
        words = _normalise(sentence)
        if _gives_word_for_step(sentence):
            return True
        if _WE_DOING.match(words) or "?" in sentence and (
                _STEP_TAG.search(words) or _STEP_NOW.match(words) or _VERB_LAST.match(words) or _MODAL_STEP.match(words)
                or _FIRST_PERSON_STEP.match(words) or _BARE_STEP.match(words)
                or _NOT_WAIT.search(words)):
            return True
    # a closing "then?" belongs to the clause before it ("Buy now, then?")
    for clause in _CLAUSE_BREAK.split(_THEN_TAG.sub("?", asking)):
        words = _corrected(_normalise(clause))
        opening = words.split()[:2]
        if opening and opening[0] in _WH_WORDS and (len(opening) < 2 or opening[1] not in _WH_PROPOSING):
            continue
        if opening[1:] == ["you"] and opening[0] in _PAST_AUXILIARIES:
            continue  # "Did you buy it a month ago?" asks what the customer did, not leave to act
        if _CUSTOMER_BOUGHT.search(words) and (" when" in words or " remember " in words):
            continue  # "When'd ya buy it?", "You buy it when?": the customer's purchase, no leave asked
        if (_BARE_ACTION.match(words) or _BARE_STEP.match(words)) and clause.rstrip().endswith("?"):
            return True  # "Order it?", "Return them now?", "I continue?"
        if words.strip() in _BARE_GO_AHEAD or _DO_IT.match(words):
            return True  # "I can place the order whenever you're ready. Should I?"
        if _MORE_TO_ADD.search(words) is not None:
            continue  # "Is there more you'd like to add?" asks for requirements, not leave to add an item
        if _OR_SHALL.match(words) and not _ACTION_WORD.search(words):
            continue  # "Do reviews matter, or shall I not worry about stars?": the question's other answer, no leave asked
        if _OWN_STEP_CLAUSE.match(words):
            continue  # "Before I place it, is there anything else?": the agent's next step names the time, no leave asked
        words = _DISCUSS.sub(" ", _ASK_LEAVE.sub(" ", words))  # "May I ask which brand you prefer?" asks the brand, not leave to act
        words = _TELL_ME.sub(r" \1 ", words)  # "go ahead and tell me ..." asks to be told, not leave to act
        words = _OWN_STEP_GO.sub(" ", _RELATIVE_WISH.sub(" ", words))
        if _has(words, _OPEN_STRONG_PHRASES):
            words = _OWN_STEP.sub(" ", words)  # "Anything else I should know before I proceed?": the agent's next step
        if _has(words, _CONFIRM_PHRASES) or _ACTION_OFFER.search(words) is not None or _WANT_DONE.search(words) or (
                _CONSENT_NEEDED.search(words) or _REPLY_GO_AHEAD.match(words) or _MENU_GO_AHEAD.search(clause)):
            return True
        if _YES_NO_END.search(words) and _STEP_FIRST.match(words):
            return True  # "proceed w/ checkout y/n"
    return False


def _identifying_values(asking: str, in_play: InPlay) -> set[str]:
    """The topics of values named in a leading clause that asks nothing ("The Nexworks one - ...", "For the black
    hoodie: ..."): they pick out the item a list after them asks about."""
    clauses = [c for c in _CLAUSE_BREAK.split(asking) if c.strip()]
    if len(clauses) < 2 or "?" in clauses[0]:
        return set()
    lead = _FILLER.sub(" ", _normalise(clauses[0]))
    if not lead.split() or lead.split()[0] in _CLAUSE_QUESTION_START:
        return set()
    plain = _without_item_names(lead, in_play)
    return set(_named_values(clauses[0], plain, in_play)) | set(_named_values(clauses[0], plain, STORE_VALUES))


#: A clause that approves the summary before it, whole ("everything is correct", "is right one", "that's the one",
#: "all correct", "we're good to go", "correct so", "sweet to order"): the go-ahead asked in a closing check.
_APPROVAL_CLAUSE = re.compile(
    r"^ (?:(?:so|and|ok|okay|now|then) )*(?:(?:is |are )?(?:it all|everything|all|this|that|it|thats|its|it is|that is|the lot|"
    r"we|we are|were|is it|is that|is everything) )?(?:is |s |are |all )?(?:all )?(?:correct|right|in order|certo|the right one|"
    r"right one|the one|good to go|good|ok|okay|fine|[a-z]+ to (?:order|go|proceed|buy|check out|checkout|send|ship))"
    r"(?: (?:so|then|yes|yeah|eh|no|innit|right))? $")
#: A short closing tag or address after the check ("..., canim?", "..., sim?", "..., dear Virgo"): no clause of its own.
_CLOSING_TAG = re.compile(r"^ (?:(?:my |dear |oh )?[a-z]+(?: [a-z]+)?|yes or no|yes no) $")


def _approves_summary(asking: str, in_play: InPlay) -> bool:
    """Whether a message's last clause (before a closing address or tag) approves the summary before it, and the
    clauses before it only tell ("Atlas 22 in size M - everything is correct, dear?", "Swift 2 USB-C, is right one?"):
    the values named are the summary's, the go-ahead is asked."""
    if in_play.dates or _RECALLED.search(_normalise(asking)):
        return False  # "August 2, correct?" asks which order; "You said M, is that right?" checks the value given
    clauses = [c for sentence in _SENTENCE.findall(asking) for c in _CLAUSE_BREAK.split(sentence) if c.strip()]
    while len(clauses) > 2 and _CLOSING_TAG.match(_normalise(clauses[-1])) and not _APPROVAL_CLAUSE.match(_normalise(clauses[-1])):
        last = _normalise(clauses[-1])
        if _names_topic_words(last) or set(last.split()) & (_VALUE_WORDS | _CLAUSE_QUESTION_START):
            return False
        clauses.pop()
    check = _APPROVAL_CLAUSE.match(_FILLER.sub(" ", _corrected(_normalise(clauses[-1])))) if clauses else None
    if check is None:
        return False
    if len(clauses) == 1:
        # a check alone after a summary the asking part leaves out ("Two items. Correct so?"), not "Just the one?"
        return " one " not in check.group() and " good " not in check.group()
    # the summary names the item first, then its values ("Luna 3 Queen, that's the one?"), not a value checked first
    # ("Queen size, correct?", "Confirming USB-A on the Swift 2, correct?")
    lead = _FILLER.sub(" ", _normalise(clauses[0])).split()
    starts = {w for item in in_play.items for name in (item.model, item.noun, item.brand) for w in _normalise(name).split()[:1]}
    if not lead or lead[0] not in starts and lead[0] not in ("everything", "all", "cart", "basket", "order"):
        return False
    for clause in clauses[:-1]:
        words = _FILLER.sub(" ", _normalise(clause))
        first = words.split()[:1]
        if "?" in clause or " or " in words or (first and first[0] in _CLAUSE_QUESTION_START):
            return False
    return True


def _summary_then_go_ahead(asking: str) -> bool:
    """Whether the topics of a go-ahead question come only from a summary before it ("Two pairs in size 10 - shall
    I check out?"): clauses that neither open a question nor offer a choice, then a last clause that asks leave."""
    # a closing tag belongs to the clause before it ("Size 9 Trek 9s, all good to go, eh?")
    clauses = [c for sentence in _SENTENCE.findall(_WORD_TAG.sub("?", _THEN_TAG.sub("?", asking)))
               for c in _CLAUSE_BREAK.split(sentence) if c.strip()]
    if len(clauses) < 2 or not _asks_go_ahead(clauses[-1]):
        return False
    for clause in clauses[:-1]:
        words = _FILLER.sub(" ", _normalise(clause))
        first = words.split()[:1]
        if "?" in clause or " or " in words or (first and first[0] in _CLAUSE_QUESTION_START):
            return False
    return True


def _intent_then_topic(asking: str, listed: bool = False) -> bool:
    """Whether the go-ahead comes only from a statement of what the agent will do before a last clause that asks a
    topic ("I'll add it now - colour?") or, when the message lists values, offers a choice ("... - gel or cream?"):
    the message asks the topic."""
    clauses = [c for c in _CLAUSE_BREAK.split(asking) if c.strip()]
    if len(clauses) < 2:
        return False
    last = _corrected(_normalise(clauses[-1]))
    if _asks_go_ahead(clauses[-1]) or not (_names_topic_words(last) or (listed and " or " in last)):
        return False
    openings = [_FILLER.sub(" ", _normalise(c)).split()[:1] for c in clauses[:-1]]
    return all(not first or first[0] not in _CLAUSE_QUESTION_START for first in openings)


def _asks_reason(asking: str) -> bool:
    """Whether a clause of the asking sentences asks why the customer returns the item: it names the cause
    ("why", "what went wrong") or, asking nothing else, a fault ("Is it faulty?"). A message that only
    mentions a fault or the reason does not ask it, so the shopper keeps it: in a statement before the
    question ("Faulty items are refunded, so shall I start the return?"), a clause that waives the question
    ("no need to say why") or states ("Sorry it's broken, ...", "... since it's faulty"), a fault that
    names the item ("the broken one") or describes the item a which-order or go-ahead question is about
    ("Which order has the problem?"), or the agent's own reason ("why I ask")."""
    for sentence in _SENTENCE.findall(asking):
        if any(_MISFIT_LIST.match(_corrected(_normalise(sentence[start:])))
               for start in (0, *(m.end() for m in _CLAUSE_BREAK.finditer(sentence)))):
            return True  # "Too small, too big, or something else?", "The lamp from May - too dim, or what?"
        clauses = _asking_clauses(sentence)
        # the clause that ends a yes/no question, but for a tail of a word or two ("..., darling?", "..., no?"), not of a
        # wh-question ("How much does the rating matter, on a scale from not at all to very?")
        last = max((i for i, c in enumerate(clauses) if len(_normalise(c).split()) > 2), default=len(clauses) - 1)
        if clauses and _opens_with_wh(_normalise(clauses[0])):
            last = -1
        for i, clause in enumerate(clauses):
            plain = _corrected(_normalise(clause))
            words = _NOT_THE_ITEMS.sub(" ", _ATTRIBUTIVE_FAULT.sub(r" \1 ", plain))
            words = _NEGATIVE_QUESTION.sub(r" \2 \1 not ", words)  # "Doesn't it work?" supposes "it does not work"
            words = _NEGATED_VERB.sub(r" \1 not ", words)  # "You weren't happy with it, were you?": "not happy"
            words = _SUBORDINATE.split(words, maxsplit=1)[0] + " "
            if _NAMED_REASON.search(words) and _asks_go_ahead(sentence):
                words = _NAMED_REASON.sub(" ", words)  # "Shall I file it, citing that reason?" names what it files
            # (a guess read before a negative question's opening is turned round: "Isn't that lamp the nicest?" praises;
            # and not an imperative: "Don't drop it.")
            guess = _NEGATED_VERB.sub(r" \1 not ", _SUBORDINATE.split(_NOT_THE_ITEMS.sub(" ", plain), maxsplit=1)[0] + " ")
            opening = _FILLER.sub(" ", guess).split()[:2]
            aux_first = opening[:1] in [[aux] for aux in _YES_NO_AUX] and opening[1:] != ["not"]
            yes_no = aux_first or (i == last and "?" in "".join(clauses[i:]))
            fault = _has(words, _REASON_STATE_PHRASES) or _WRONG.search(words) is not None or (
                _ARRIVED_AS.search(words) is not None) or _guesses_fault(guess, yes_no)
            # the cause as what the agent needs or asks for ("I'll need the cause.", "Tell me the cause.")
            cause = _has(words, _REASON_ASK_PHRASES) or _GIVE_REASON.match(_FILLER.sub(" ", words)) is not None or (
                " what " in words and _CAUSED_RETURN.search(words) is not None) or (
                _REASON_NEEDED.search(words) is not None) or (fault and _WHAT_FAULT.match(_FILLER.sub(" ", words)) is not None
                                                         and not _has(words, _WHICH_PHRASES))
            # not "you don't need it any more?", nor "whatever is the matter?" (which asks)
            waived = _has(_NO_LONGER.sub(" ", _WHATEVER_ASKS.sub(" ", words)), _WAIVE_PHRASES)
            # not "if you tell me ..."; "Should it arrive damaged, ..." states a condition
            stating = (words.startswith(_STATING_PHRASES) or (_INVERTED_IF.match(words) and "?" not in clause)) and not (
                _NOT_CIRCUMSTANCE.match(words) or _NOT_CIRCUMSTANCE.match(plain))  # ("If I might trouble you for ...")
            if not (cause or fault) or waived or stating or _PURPOSE_SO.match(words):
                continue
            # "You weren't happy with the sound?" supposes a fault; "happy with" asks no leave there
            # and "Say what the trouble was and I'll sort the rest" promises the step, it asks no leave
            leave = _asks_go_ahead(_PROMISE_AFTER.sub(" ", words)) and not _DISCONTENT.search(words)
            # a yes/no question whose predicate is the fault, the date only naming its subject, guesses at the fault
            # ("Was the May 3 lamp not what you hoped?"), it does not ask which line ("Was it the May 3 one that broke?")
            # (the fault said after the date: "Is the problem with the May 3 order?" asks which order has it)
            dates = list(_DATE_WORDS.finditer(words))
            after = words[dates[-1].end():] if dates else ""
            dated_guess = aux_first and (
                _has(after, _REASON_STATE_PHRASES) or _WRONG.search(after) is not None or _DENIED.search(after) is not None
                or (fault and _DONE_TO_IT.match(_FILLER.sub(" ", words)) is not None)) and (
                not _asks_which_line(_DATE_WORDS.sub("", words)))
            if cause or not ((_asks_which_line(words) and not dated_guess) or leave):
                return True
    return False


#: Openings of a clause that asks leave to act ("shall I ...", "ok to ...", "want me to ...", "happy for me to ...").
_GO_AHEAD_OPENINGS = _CLAUSE_QUESTION_START | {"ok", "okay", "alright", "good", "ready", "fine"}


def _go_ahead_beside_reason(asking: str) -> bool:
    """Whether, beside the reason, a clause of its own asks the go-ahead: it opens a question or a tag ("..., and
    shall I start the return?", "... - ok?", "Want me to arrange a replacement?") and names no cause or fault;
    not the agent's own next step ("..., so I can process the return?")."""
    for sentence in _SENTENCE.findall(asking):
        if _TAG_QUESTION.search(sentence) and _ACTION_OFFER.search(_normalise(sentence)):
            return True  # "Tell me what's wrong and I'll start the return - ok?"
        clauses = [c for part in _CLAUSE_BREAK.split(sentence) for c in _QUESTION_JOIN.split(part) if c.strip()]
        for clause in clauses:
            words = _corrected(_normalise(clause))
            opening = {w for w in (words.split()[:1] + _FILLER.sub(" ", words).split()[:1])}
            if (opening & _GO_AHEAD_OPENINGS and not _has(words, _REASON_PHRASES)
                    and _WRONG.search(words) is None and _asks_go_ahead(clause)):
                return True
    return False


#: The agent's step asked in a clause of its own after a question ("..., and shall I order them?", "..., and then do I
#: close the sale?", "..., and I close the order?") or a request to confirm leave for it ("... and confirm that I may then
#: place the order"); not a promise ("and I'll add it", "and I will check out"), which asks no leave.
_STEP_CLAUSE = re.compile(r"^ (?:(?:and|then|so|after that|after which|right after) )*(?:(?P<request>(?:please |kindly |just )?"
                          r"confirm (?:that|whether|if) (?:i|we) (?:may|can|could|should|shall))|(?:shall|should|may|can|could|do) "
                          r"(?:i|we)|(?:i|we|im|were)(?: am| are)?|(?:i|we) (?:can|could|may)(?= (?:(?:then|now|just) )*[a-z]+ "
                          r"(?:the |your |this )?(?:order|purchase|checkout|payment)\b)) (?:(?:then|now|just|go ahead and|right away) )*(?:" + _ACTIONS
                          + r"(?:s|ing)?|(?:plac|clos|purchas|complet|finalis|finaliz|issu|arrang|releas|exchang|replac)ing) |"
                          # ... "will I" as "shall I" (Irish English: "and will I ring them through?") and the readiness
                          # asked ("and am I good to order?", "and are we good to send?")
                          r"^ (?:(?:and|then|so) )*(?:will (?:i|we) (?:(?:then|now|just) )*" + _ACTIONS + r" |"
                          r"(?:am i|are we) (?:good|ok|okay|clear|set|right|free) to " + _ACTIONS + r" )")
#: The agent's promise or next step beside a topic that asks leave only with a tag of its own ("How many, and I'll book
#: it in, alright?", "..., and after I finish the order, okay?", "How many? And I can order them, no?"); without one it
#: is a promise and asks only the topic ("Tell me the colour and I'll add it.", "Which colour, and I'll add it?", "How
#: many? And I'll ring them up!").
_PROMISED_STEP = re.compile(r"^ (?:(?:and|then|so) )*(?:(?:after|then) )?(?:i|we|ill|well|i will|we will|i can|we can)(?: then| now| just)? "
                            + _ACTIONS + r"(?:s)? ")
#: The opening of a question asking leave in a clause of its own ("shall I", "may we then", "do I have", "would you like
#: me to", "am I clear to"); :func:`_asks_go_ahead` says whether the clause asks leave.
_LEAVE_OPENING = re.compile(r"^ (?:(?:and|then|so|also) )*(?:(?:shall|should|may|can|could|do|will|have|am|are) (?:i|we)|(?:would|do|will) "
                            r"(?:you|ya|u) (?:like|want|need|wish) (?:me|us) to) ")
_STEP_TAG_END = re.compile(r"^\s*(?:(?:is )?(?:that |it )?(?:ok|okay|alright|all right|fine)|right|yes|no|yeah|ya)(?: with you)?\s*\?\s*$",
                           re.IGNORECASE)


def _go_ahead_after_topic(asking: str) -> bool:
    """Whether, after a question or request that names a topic ("How many hoodies", "Please state the quantity"), a
    clause of its own asks leave for the agent's step and names no topic: the message asks both ("How many pairs, and
    may I then complete the order?"). A step said in the same clause as the topic ("Which size shall I add?") or as
    the agent's promise ("Tell me the colour and I'll add it.") asks only the topic."""
    before: list[str] = []
    for sentence in _SENTENCE.findall(asking):
        parts = [c for part in _CLAUSE_BREAK.split(sentence) for c in _AND_SPLIT.split(part) if c.strip()]
        # a sentence that opens "And ..." goes on from the question before it ("How many? And I can order them, no?")
        clauses = before + parts if _AND_START.match(sentence) else parts
        offset = len(clauses) - len(parts)
        for i, clause in enumerate(clauses[1:], 1):
            if i < offset:
                continue
            words = _corrected(_normalise(clause))
            step = _STEP_CLAUSE.match(words)
            if step is None and _PROMISED_STEP.match(words) and not _names_topic(clause) and (
                    i + 1 < len(clauses) and _STEP_TAG_END.match(clauses[i + 1])):
                step = _PROMISED_STEP.match(words)  # "How many, and I'll book it in, alright?"
            elif step is not None and not ("?" in sentence or step.group("request")):
                step = None
            elif step is None and "?" in sentence and _LEAVE_OPENING.match(words) and _asks_go_ahead(clause.rstrip(" ?") + "?") and (
                    not _named_values(clause, words, STORE_VALUES)):
                # a question of its own for leave in other words ("..., and do I have the green light to order?",
                # "..., and would you like me to order them?", "..., and shall we head to checkout?"; not a value
                # offered, "..., and shall I stick to Kinwear?")
                step = _LEAVE_OPENING.match(words)
            if step is None or _names_topic(clause):
                continue
            lead = [_FILLER.sub(" ", _normalise(c)) for c in clauses[:i]]
            if any(_asks_topic(words) for words in lead) and any(_names_topic(c) for c in clauses[:i]):
                return True
        before = parts
    return False


_AND_SPLIT = re.compile(r"\s+(?:and|an['\u2019])\s+", re.IGNORECASE)
_AND_START = re.compile(r"^\s*(?:and|an['\u2019])\s", re.IGNORECASE)


def _asks_line_beside(asking: str, in_play: InPlay) -> bool:
    """Whether, beside the reason, a question of its own asks which line is meant ("Is it the hoodie from the
    11th, and why does it need returning?"): a clause that opens a question, says nothing of the cause or a
    fault, and names an ordered item or asks about a line."""
    for sentence in _SENTENCE.findall(asking):
        for clause in _QUESTION_JOIN.split(sentence):
            words = _NEGATED_VERB.sub(r" \1 not ", _FILLER.sub(" ", _corrected(_normalise(clause))))  # as _asks_reason reads it
            first = words.split()[:1]
            if not first or first[0] not in _CLAUSE_QUESTION_START or _has(words, _REASON_PHRASES) or _WRONG.search(words) or (
                    _guesses_fault(words, first[0] in _YES_NO_AUX)):
                continue
            if (_referenced(clause.lower(), in_play) or _asks_which_line(words) or _asks_about_line(clause.lower())
                    or _has(words, _WHICH_PAST_PHRASES)):
                return True
    return False


def _asking_clauses(sentence: str) -> list[str]:
    """The clauses of one sentence that ask: from the first that opens a question or a request to the end
    ("Faulty items are refunded, so shall I start the return?" asks only in its second clause); the whole
    sentence when none opens one, or only a tag does ("Broken, faulty, or a change of mind?", "It was
    damaged, was it?")."""
    clauses = [c for part in _CLAUSE_BREAK.split(sentence) for c in _QUESTION_JOIN.split(part) if c.strip()]
    for i, clause in enumerate(clauses):
        words = _FILLER.sub(" ", _normalise(clause))
        first = words.split()[:1]
        if (first and first[0] in _CLAUSE_QUESTION_START) or words.startswith(_REQUEST_PHRASES):
            if i == len(clauses) - 1 and i > 0 and len(words.split()) <= 2:
                return clauses  # a tag
            if i > 0 and (_REQUEST_FOR_IT.match(words) or _COURTESY.match(words)):
                # "I must record the grounds; kindly supply them." asks what the clause before it names; so does a lone
                # "please" ("I want the grounds, please, for the file.")
                i -= 1
            while i > 0 and _FRONTED_WH.match(_normalise(clauses[i - 1])):
                i -= 1  # "For which order, and for what reason, is the refund requested?" asks in its fronted phrases
            while i > 0 and (_offers_choice(clauses[i - 1]) or _OR_BEFORE.search(sentence[:sentence.find(clause)])):
                i -= 1  # "Faulty or damaged - which was it?", "It broke, or was it something else?" ask among the
                # options before them
            return clauses[i:]
    return clauses


#: A clause that is only a courtesy ("please", "kindly", "if you would").
_COURTESY = re.compile(r"^ (?:please|kindly|pls|if you (?:would|could|can|will|please)|thanks|thank you)(?: (?:please|kindly))? $")
#: A wh-phrase fronted with its preposition, its clause's verb after it ("For which order, ..., is the refund requested?").
_FRONTED_WH = re.compile(r"^ (?:and |or )?(?:for|from|in|on|with|by|to|about|of) (?:which|what|whose) [a-z]+ $")
#: A clause joined to the one before by "or" ("..., or was it something else?").
_OR_BEFORE = re.compile(r"\bor[\s,]*$", re.IGNORECASE)


def _offers_choice(clause: str) -> bool:
    """Whether a clause before a question lists options it asks among ("Faulty or damaged, ...", "Broken,
    ..."), not a statement ("Sorry it's broken, ...")."""
    words = _normalise(clause)
    return (" or " in words or len(words.split()) <= 2) and not (words.startswith(_STATING_PHRASES)
                                                                  or _PURPOSE_SO.match(words))


#: "Is the hoodie the one with the issue?", "When did the one with the problem arrive?": a question that picks
#: out a line by its fault asks which line.
_THE_ONE = re.compile(r"(?<! than) the one (?:with|that|which|from|you|delivered|ordered|bought|in) |"
                      r" (?:is|was) (?:it|this|that) the (?:[a-z0-9]+ ){1,2}(?:that|which) ")


#: "Which bit isn't working?", "which part broke?": which part of the item has the fault, not which line.
_WHICH_PART = re.compile(r"^ which (?:bit|bits|part|parts|piece|pieces|side|button|buttons|feature|features|function|"
                         r"setting|earbud|earpiece|seam|zip|strap)s? ")


#: "may" as a modal ("may I enquire ...", "it may be"), no month.
_MODAL_MAY = re.compile(r"(?: (?:i|we|you|it|they|he|she|that|this|which|what|there))? may (?=(?:i|we|you|it|they|he|she|be|have|not|"
                        r"also|just|well|still|now|ask|enquire|inquire|know|need|want|wish|like)\b)")


def _asks_which_line(words: str) -> bool:
    """Whether a normalised clause asks which order or item is meant ("which order", "which one is ...", "the
    September 10 one")."""
    return _has(words, _WHICH_PHRASES) or _has(_MODAL_MAY.sub(" ", words), _MONTH_WORDS) or _THE_ONE.search(words) is not None or (
        _FILLER.sub(" ", words).startswith(" which ") and _WHICH_PART.match(_FILLER.sub(" ", words)) is None) or (
        " which " in words and (_has(words, _ORDER_WORDS) or _has(words, _LINE_REFERENCE)))


#: The agent knows or names the answer itself ("What're you after? Ha, I already know: a lamp!", "Which colour wins? Navy,
#: of course!").
_OWN_ANSWER = (r"(?:ha |haha |oh |well |but )?(?:i|we) (?:already |do |can )?(?:know|knew|guess|guessed|tell)\b"
               r"(?! (?:you|if|whether|what|which|how|when|why)\b)|(?:[a-z0-9]+ ){1,3}(?:of course|obviously|naturally|hands down)")
#: A sentence that answers the question before it ("Is a 27-inch screen too big? Not really, ...", "Is return shipping
#: free? Per policy, yes, ...", "... after 30 days? Unfortunately not; ..."): that question was the agent's own, asked of
#: itself.
_ANSWER = re.compile(r"^ (?:(?:per|as per|under|according to|by) (?:our |the |store |company )?(?:policy|rules|terms) )?"
                     r"(?:unfortunately not|unfortunately no|sadly not|sadly no|im afraid not|i am afraid not|yes|yeah|yep|no|nope|not really|not at all|absolutely|of course|definitely|certainly|no worries|"
                     r"not to worry|sure|surely not|hardly|far from it|i think not|i thought not|i doubt it|i doubt that|"
                     r"i dont think so|i didnt think so|obviously not|course not|course|"
                     + _OWN_ANSWER + r"|"
                     # a time the agent states as its own rule ("How fast do refunds land? 3-5 business days, that's our
                     # SLA.")
                     r"(?:\d+ )?\d+ (?:business |working )?(?:days|hours|weeks)\b(?=.* (?:our|the|store|company) (?:sla|"
                     r"policy|standard|norm|promise|guarantee|window|timeline|turnaround)\b))\b")


def _answered_itself(raw: str, answer: re.Pattern[str] | None = None) -> bool:
    """Whether every question of the message is answered by the sentence after it (``answer``: in those words only):
    nothing is asked."""
    parts = _SENTENCE.findall(raw)
    asked = [i for i, part in enumerate(parts) if "?" in part]
    return bool(asked) and len(parts) > 1 and all(
        i + 1 < len(parts) and (answer or _ANSWER).match(_normalise(parts[i + 1])) is not None
        and _ANSWER_KEYS.match(parts[i + 1]) is None and _NO_NOUN.match(parts[i + 1]) is None for i in asked)


#: ... where the agent gives the answer as its own (:data:`_OWN_ANSWER`), not a bare "yes" or "no" that may be the
#: customer's choices ("Ready? Yes or no is fine!"): the learned model is not asked either.
_OWN_ANSWERED = re.compile(r"^ (?:" + _OWN_ANSWER + r")\b")


#: The lead-in words and the agent as subject that open a step it tells ("Okay, I'll ...", "Right, let me ...").
_STEP_LEAD = r"^ (?:(?:ok|okay|right|alright|great|perfect|lovely|thanks|so|then|now|well) )*"
_STEP_SUBJECT = r"(?:ill|i will|im|i am|well|we will|were|we are|let me|lets)"
#: The agent saying it takes a step now ("I'll go ahead and process the return now.", "Placing the order now."), ...
_STEP_TOLD = re.compile(_STEP_LEAD + r"(?:" + _STEP_SUBJECT + r"(?: now| just| then| straight)? )?"
                       r"(?:go ahead|going ahead|proceed|proceeding|process|processing|place|placing|start|starting|"
                       r"submit|submitting|send|sending|finish|finishing|complete|completing|book|booking|file|filing|"
                       r"lodge|lodging|raise|raising|initiate|initiating|put|putting|check out|checking out)\b|"
                       # ... or that it looks something up, said with its subject ("I'll look up which order that was.",
                       # "Let me check which one it is."; a bare "Check ..." asks it of the customer)
                       + _STEP_LEAD + _STEP_SUBJECT + r"(?: now| just| then| quickly)? "
                       r"(?:look up|looking up|look into|looking into|check|checking|find|finding|pull up|pulling up|"
                       r"search|searching|locate|locating)\b")
#: ... or that the agent has all its step needs ("That's everything I need to start the return.", "I've got all I need
#: to book it."): no leave asked either.
_HAS_WHAT_STEP_NEEDS = re.compile(_STEP_LEAD + r"(?:thats|that is|that s|i have|ive got|i ve got|i now have|we have|weve got|"
                                  r"we ve got)(?: now)? (?:everything|all) (?:i|we) need(?:ed)? (?:to|for) ")
#: ... unless it waits on the customer's word or asks it ("I'll place it if that's fine.", "I'll send it once you
#: nod.", "Say yes and I'll place it.", "I'll go ahead and book it, OK?").
_WAITS_ON_CUSTOMER = re.compile(r" (?:if|once|when|whenever|unless|soon as|after you|provided|say|says|nod|word|yes|ok|"
                                r"okay|approve|approval|permission|consent|blessing|green light|confirm|go ahead from you|"
                                r"thumbs)\b")


def _announces_own_step(raw: str, plain: str) -> bool:
    """Whether a statement (``plain``: ``raw`` normalised) only tells a step the agent takes now, waiting on no word
    of the customer's."""
    return (any(_STEP_TOLD.match(part) or _HAS_WHAT_STEP_NEEDS.match(part)
                for part in (_normalise(sentence) for sentence in _SENTENCE.findall(raw)))
            and not _WAITS_ON_CUSTOMER.search(plain))


#: The agent reporting what it did or passing on a fact ("I've picked a Teal yoga mat, all within your budget.", "I
#: thought you might like to know that the sheets come in Queen and King.").
_REPORT = re.compile(_STEP_LEAD + r"(?:(?:ive|i ve|i have|weve|we ve|we have)(?: just| already| now)? (?:picked|chosen|selected|"
                     r"added|found|located|included|lined up|pulled up|gone with|matched|noted|put together|shortlisted)|"
                     r"(?:i|we)(?: just| already)? (?:picked|chose|selected|added|found|located|included|lined up|went with|"
                     r"matched|noted|shortlisted)|(?:i )?thought (?:you|youd|you d)(?: might| would)? (?:like|want|wish) to know|just so you know|"
                     r"fyi|for your information|heads up|you should know|good to know|worth knowing|(?:a |the |my |our )?(?:record|"
                     r"summary|recap|rundown|notes?|list) of (?:your |the )?(?:preferences|requirements|needs|choices|"
                     r"picks|wishes)|(?:noted )?so far|recap|to recap|in summary) ")


def _only_reports(raw: str, plain: str) -> bool:
    """Whether every sentence of a statement (``plain``: ``raw`` normalised) reports the agent's done step or passes
    on a fact, waiting on no word of the customer's."""
    return (all(_REPORT.match(_normalise(sentence)) for sentence in _SENTENCE.findall(raw))
            and not _WAITS_ON_CUSTOMER.search(plain))


def _only_offers(raw: str) -> bool:
    """Whether every sentence of a statement offers options ("There are a few options for the bottle: Orange, Teal or
    Black.") and none hands the choice over: it tells what there is, the question may follow."""
    sentences = _SENTENCE.findall(raw)
    return all(_OFFER.match(_normalise(s)) and not _hands_over(s) for s in sentences)


def _asks_leave_in_statement(plain: str, asks: float) -> bool:
    """Whether a statement (``plain``, normalised) may ask the go-ahead at the model's lower chance
    (``_SURE_GO_AHEAD_OF_STATEMENT``): it waits on the customer's word or the model is sure it asks (``asks``)."""
    return asks > _SURE_ASKS_GO_AHEAD or _WAITS_ON_CUSTOMER.search(plain) is not None


#: "No" as a determiner ("What will you spend? No freebies at this door."): a statement, no answer.
_NO_NOUN = re.compile(r"^\s*no\s+(?!(?:it|i|we|they|that|this|not|never|sorry|way|problem|worries|need|thanks|chance|"
                      r"doubt|one|idea|really)\b)[a-z]", re.IGNORECASE)


#: The answers offered after a question ("Proceed? (yes/no)", "y/n"): no answer given.
_ANSWER_KEYS = re.compile(r"^\s*[(\[]?\s*(?:yes|y)\s*(?:/|or)\s*(?:no|n)\s*[)\]]?\s*(?:[.!]?\s*$|[,;:\u2014\u2013-])", re.IGNORECASE)

#: The choice handed to the customer at the end of a sentence, in any idiom ("Your call.", "You pick.", "..., but you
#: tell me.", "..., so it is your call.", "Take your pick, love.", "Shout it out!", "Go."): a request for what the
#: sentence or the one before it names or offers. Near misses: the words inside a statement ("Your call is important
#: to us.", "You pick it up Monday.", "Go enjoy it!"), a call or pick of the agent's own ("My pick is the Navy."), and
#: a step the customer already took ("You picked Navy."), "up to you" after the agent's advice ("I'd recommend a
#: warranty, but it's up to you."), and "Go?" with its mark, which asks leave ("Luna 3, Queen. Go?").
_HANDOVER = re.compile(r"^ (?:(?:so|but|and|now|then|ok|okay|well|anyway) )*(?:(?:its|it is|thats|that is) )?(?:all |entirely |totally )?"
                       r"(?:(?:your|ur) (?:call|pick|choice|shout|decision)|(?:you|u) (?:pick|choose|decide|tell me|call it)|"
                       r"pick one|take your pick|shout it out|go|dealers choice|"
                       # a call or a pick named in other words ("Make the call on the pan.", "Pick your poison!", "Your
                       # move."), or a bare order to answer ("Sound off!", "Report!")
                       r"(?:make|take) (?:the|your) (?:call|pick|choice|decision)(?: on (?:the|this|that|your) [a-z0-9]+(?: [a-z0-9]+)?)?|"
                       r"pick your [a-z]+|your move|sound off|report)"
                       r"(?: (?:love|mate|pal|friend|then|now|please|boss|dear|hun|duck|cuz))* $")


#: A word every hand-over (:data:`_HANDOVER`) holds.
_HANDOVER_HINT = re.compile(r"\b(?:call|pick|choice|shout|decision|choose|decide|tell|go|dealers?|report|sound|move)\b",
                            re.IGNORECASE)


def _hands_over(sentence: str) -> bool:
    """Whether the last clause of ``sentence`` hands the choice to the customer (:data:`_HANDOVER`), after options or
    a topic named in the sentence or the one before it."""
    if _HANDOVER_HINT.search(sentence) is None:
        return False  # (a quick look for the words a hand-over needs: most sentences have none)
    clauses = [c for c in _CLAUSE_BREAK.split(sentence) if c.strip(" .!?")]
    if len(clauses) >= 2 and _VOCATIVE.match(last := _normalise(clauses[-1])) and _HANDOVER.match(last) is None and (
            not _names_topic(clauses[-1])):
        clauses.pop()  # "Your call, skipper."
    return bool(clauses) and "?" not in clauses[-1] and _HANDOVER.match(_normalise(clauses[-1])) is not None


#: The agent's need of a topic said without the opening `_NEED_REQUEST` knows: after a lead-in run on without a comma
#: ("Reckon I'll just need your shoe size and we're in business.", "Before I quote you I'll need the ceiling on the
#: spend."), without its subject ("Need a size on the Atlas 22 before I order."), with the topic fronted ("Shoe size
#: I need.", "The colour is all I need."), or as a bare noun phrase of the customer's ("First, your size on the Atlas
#: 22.", "Last field on my side: your size for the jacket."). Only where the clause names a topic; near misses: a need
#: of nothing the customer holds ("Reckon I'll need a minute.", "Need a coffee before I start."), a statement of the
#: customer's value ("Your size is in stock."), and a need the agent met ("I needed your size, and you gave it.").
_NEED_LEAD_IN = re.compile(r"^ (?:(?:so|ok|okay|right|well|now) )?(?:(?:i )?reckon |i think |i guess |i suppose |"
                           r"before (?:i|we) (?:[a-z0-9]+ ){1,3}?)(?=(?:i|we|ill|well|id) (?:just |only |still |will |would )*"
                           r"(?:need|require) )")
_TOPIC_NEEDED = re.compile(r"^ (?:(?:just|still|only|first|so|ok|okay|right) )*(?:need|needs|want) (?:a|an|the|your) |"
                           r"^ (?:(?:the|your|a) )?(?:[a-z0-9]+ ){1,3}?(?:(?:is|will be) )?(?:all |just |only )?(?:(?:that|what) )?"
                           r"(?:i|we) (?:still |really |just |will )?(?:need|require)(?: (?:now|first|from you|please))? $|"
                           r"^ (?:(?:first|next|then|now|and|so|lastly|finally|ok|okay|right) )*your (?:[a-z]+ )?[a-z]+(?: (?:on|for|of) "
                           r"(?:the|your|that|this|those|them) (?:[a-z0-9]+ ){1,3}?)?(?:please )?$")


def _needs_topic(sentence: str) -> bool:
    """Whether a clause of ``sentence`` says the agent needs a topic the customer holds (:data:`_TOPIC_NEEDED`, or a
    need after :data:`_NEED_LEAD_IN`), naming the topic."""
    for clause in _CLAUSE_BREAK.split(sentence):
        words = _corrected(_normalise(clause))
        if (_TOPIC_NEEDED.match(words) or _NEED_LEAD_IN.match(words)) and not _NOT_A_VALUE_NEED.search(words) and (
                _names_topic(clause)):
            return True
    return False


#: A customer's value said as in hand or in stock beside the need words ("your size is in stock"): no need asked.
_NOT_A_VALUE_NEED = re.compile(r" (?:is|are|was|were) (?:in stock|sold out|available|ready|here|fine|great|perfect) ")


def _asking_part(raw: str) -> str:
    """The sentences of ``raw`` that ask (a question or a request), or all of it when none does on its own:
    "Happy to help you find sheets!" before the question is a greeting, not a wish to be confirmed. A request for
    "it" ("We must record the reason. Please provide it.") asks what the sentence before it names."""
    parts = _SENTENCE.findall(raw)
    if len(parts) < 2:
        return raw
    # (not the step asked on it: "The return is filled in. Send it?" asks leave to send it)
    asks = [_is_request(p) for p in parts]
    handed = [_hands_over(p) for p in parts]
    asking = [p for i, p in enumerate(parts)
              # the options or topic named right before the hand-over are what it asks among ("Glow 7 comes as cream,
              # gel or spray. You pick."), unless that sentence names a fault ("Steel won't break, but there's wood
              # too. Your pick." would say the withheld reason)
              if asks[i] or (i + 1 < len(parts) and handed[i + 1] and not asks[i] and not _asks_reason(p)) or (i + 1 < len(parts) and _REQUEST_FOR_IT.match(_normalise(parts[i + 1])) and not (
                  "?" in parts[i + 1] and _BARE_ACTION.match(_normalise(parts[i + 1]))))
              # the options offered right after the question are what it asks among ("What would you like for the
              # hoodie? We have Black, Navy or Olive.")
              or (i > 0 and asks[i - 1] and _OFFER.match(_normalise(p)) is not None and _OPTION_LIST.search(p) is not None)
              # the heading of a field demanded after it names whose field it is ("Shoes! Size!")
              or (i + 1 < len(parts) and asks[i + 1] and not asks[i] and _MONEY_HEADING.match(_normalise(p)) is not None
                  and _exclaimed_field(parts[i + 1]))]
    return " ".join(asking) if asking else raw


#: A sentence that offers the options it lists ("We have Black, Navy or Olive.", "It comes in S, M or L.").
_OFFER = re.compile(r"^ (?:(?:we|i) (?:have|carry|stock|offer|sell|ve got|can do)|(?:it|they|this|these|that|those|the [a-z0-9 ]+?) "
                    r"(?:comes?|is|are) (?:available |offered )?in|(?:it |they )?comes? in|available in|(?:the )?(?:options|"
                    r"choices|colours|colors|sizes|versions) (?:are|would be)|(?:you can )?(?:choose|pick|select) (?:from|between)|"
                    r"there (?:are|is|re|s) (?:a few |some |several |a couple of |two |three |four )?(?:options|choices|"
                    r"versions|colours|colors|sizes) (?:for|of|on|in))\b")


#: A need of what the sentence before names ("Reason for the return. I need it for the form.").
_NEED_IT = (r"^ (?:(?:so|and|just) )?(?:(?:i|we|(?:the )?(?:system|form|slip|computer|till)) )?(?:just |really |also |still |do )?"
            r"(?:need|needs|require|requires) (?:it|that|this|one)"
            r"(?: for (?:the|my|our|your) [a-z]+| to proceed| please| now)? $")
#: A request whose only object is "it" ("Please provide it.", "Could you share that?", "What is yours?").
#: The customer, their counsel or the court named in the third person, as a judge or clerk addresses them.
_THIRD_PARTY = r"(?:the )?(?:customer|customers|shopper|shoppers|client|buyer|counsel|defendant|witness|claimant|court|bench)"
#: A directive in the third person ("The customer will state, for the record, XS, M or XXL.", "Counsel will explain what
#: went wrong.", "The customer will identify the order by its date.", "The court will hear your budget."): a request.
#: Not what the customer will receive or do later ("The customer will receive an e-mail.", "The court will proceed.").
_THIRD_PERSON_DIRECTIVE = re.compile(r"^ (?:(?:so|now|then|and) )*" + _THIRD_PARTY + r" (?:will|shall|must|is to|are to)(?: now)? "
                                     r"(?:(?:now|kindly|please|hereby|promptly|simply) )*(?:state|explain|identify|supply|provide|"
                                     r"tell|name|specify|confirm|signify|indicate|declare|give|describe|hear|choose|select|pick|"
                                     r"advise)\b")
_REQUEST_FOR_IT = re.compile(r"^ (?:" + _THIRD_PARTY + r" (?:will|shall|must|is to|are to) )?(?:(?:please|kindly|just|so|could|can|would|will|you) )*(?:provide|give|share|send|state|specify|supply|"
                             r"tell|let) (?:me |us )?(?:have )?(?:it|that|this|them) (?:please |for me |to me |to us |now )?$|"
                             r"^ (?:(?:please|kindly|just|so|could|can|would|will|you) )*(?:provide|give|share|send|supply|state) (?:me |us )?"
                             r"(?:one|an? one) (?:please )?$|"
                             r"^ (?:(?:please|kindly|just) )*(?:respond|reply|answer) accordingly $|"
                             r"^ (?:so |and )?(?:what|whats|which) (?:is |are |was |were )?yours(?: for (?:[a-z]+ ){1,3})? $|"
                             # "... must write the reason. What, pray, was it?"
                             r"^ (?:so |and )?what (?:pray )?(?:is|was|were) (?:it|that|they)(?: then| pray)? $|"
                             # "Let's talk budget ... What's the number?"
                             r"^ (?:so |and |ok |okay )?(?:what|whats) (?:is )?(?:the|your) (?:number|figure) $|" + _NEED_IT)
#: The reason said as what the agent needs ("For the return I need the reason.", "need a return reason to proceed").
#: Also the reason as what the agent must note ("I'll need to note the reason on the form.", "I must record the grounds").
_REASON_NEEDED = re.compile(r"(?<! dont)(?<! do not)(?<! no)(?<! not)(?<! wont) (?:need|needs|require|requires|must|gotta|have to|"
                            r"has to|got to)"
                            r"(?: to)?(?: (?:note|record|log|enter|write down|write|put down|file|fill in|put in))? (?:(?:the|a|your|its) )?"
                            r"(?:[a-z]+ )?(?:reason|motive|grounds|cause)\b")
#: What brought the customer to return it, asked as its cause ("What led you to send the hoodie back?", "What moved the
#: customer to return it?"), what they did not like about it ("What didn't you love about the hoodie?"), or what spoiled
#: it for them ("What disturbed your harmony with the headphones?"): the reason. Not what interested them, nor what led
#: them to buy it ("What led you to the Trek 9?").
_CAUSED_RETURN = re.compile(r" what (?:(?:has|had|did|would) )?(?:led|made|drove|brought|caused|moved|prompted|spurred|pushed|"
                            r"compelled|inspired|got|persuaded|convinced|forced) (?:you|ya|u|ye|the shoppers?|the customers?|the client|"
                            r"sir|madam|them)(?: to| into)? (?:(?:want|wish|decide|choose|need) to )?(?:return|send|bring|give|take|"
                            r"hand|post|ship)(?:ing)?\b|"
                            r" what (?:didnt|did not|do not|dont) (?:you|ya|u) (?:like|love|enjoy|fancy|rate) about |"
                            r" what (?:disturbed|bothered|upset|annoyed|irked|disappointed|frustrated|spoiled|spoilt|ruined|marred) "
                            r"(?:you|ya|your)\b")
#: The reason or the fault asked with an imperative ("State the reason for the return.", "Report the malfunction.").
_GIVE_REASON = re.compile(r"^ (?:(?:please|kindly|just|now|so|then) )*(?:state|give|provide|supply|report|name|enter|describe|"
                          r"indicate|tell|share|explain|let me know) (?:me |us )?(?:(?:the|your|a|its) (?:[a-z]+ )?)?(?:reason|reasons|grounds|cause|malfunction|fault|"
                          r"problem|issue|motive|anomaly|failure|defect|complaint)\b")
#: A condition said with the verb first ("Should the item arrive damaged, ...").
_INVERTED_IF = re.compile(r"^ should (?:the|it|this|that|they|you|your|there|anything|something|any|an|a|its|those|"
                          r"these)\b(?! (?:i|we)\b)")
#: A request for later ("... if you change your mind", "... any time"): nothing is asked now.
_LATER = re.compile(r" (?:change your mind|later|later on|any ?time|in future|in the future|at any point|down the line) ")


#: A sentence that only tells the customer something or asks them to wait or keep something, though it opens like
#: a request or a question ("Please be aware that ...", "Do note that ...", "Would you believe it, ...", "Give me a
#: moment while I compare the Brightix lamps.").
_NOTICE = re.compile(r"^ (?:(?:please|do|kindly|just) )?(?:note|be aware|be advised|see|bear with|keep|hold|hold on|"
                     r"wait(?! (?:what|whats|which|why|how|who|when|where|so|is|are|do|did|does)\b)|allow|"
                     r"find attached|expect|rest assured|take note|give (?:me|us) (?:a|one) (?:moment|second|sec|minute|min|mo|tick|jiffy))\b| (?:would you believe|guess what|believe it or not)\b")


#: A sentence without a question mark that opens with a question word but tells: an exclamation ("What a lovely
#: choice", "How nice", "How about that"), a relative or subordinate clause ("Which is great news", "When an item is
#: faulty we ...", "Who knew"), or "any" that states ("Any of these would ship by Friday").
_NOT_A_QUESTION = re.compile(r"^ (?:what an? |"
                             # what the agent hears, sees or thinks, as a subject ("What I'm hearing is that navy suits you")
                             r"what (?:i|im|ive|id|we|were|weve) (?!(?:need|want|require|would|will|must|ask|asking|am asking)\b)"
                             r"(?:[a-z]+ ){1,3}(?:is|was) (?:that|how)\b|what (?:luck|fun|joy|timing|news)\b|how (?!(?:much|many|long|soon|quick|quickly|fast|"
                             r"big|small|large|heavy|light|bright|old|often|far|tall|wide|about you|would|will|do|does|did|"
                             r"is|are|was|were|can|could|should|shall|may|might|have|has)\b)[a-z]+(?: (?:that|of you|it is|"
                             r"is that))? $|how (?:nice|lovely|great|kind|exciting|cool|wonderful|awesome|fun|funny|odd|"
                             r"strange|annoying|frustrating|about that)\b|"
                             # praise of what the agent points at ("How good is that lamp, eh!")
                             r"how (?:good|nice|lovely|great|cool|gorgeous|beautiful|stunning|amazing|awesome|sweet|neat|cute|"
                             r"brilliant|fab|fabulous|sleek|smart) (?:is|are|was|were|does|do) (?:that|this|those|these)\b|"
                             # ... or names it ("How beautiful is the ceramic Terra 5!"; not "how big is the screen")
                             r"how (?:gorgeous|beautiful|stunning|lovely|cute|sleek|adorable|pretty|elegant|fabulous|divine|"
                             r"charming|dreamy) (?:is|are|was|were|does|do) (?:the|your|my|our)\b|"
                             # ... in an exclamation's order, the verb after what it names ("How beautiful the wooden Terra
                             # 5 is!"; not "how heavy the pan is" asked in a question of its own)
                             r"how (?:gorgeous|beautiful|stunning|lovely|cute|sleek|adorable|pretty|elegant|fabulous|divine|"
                             r"charming|dreamy|good|nice|great|cool|amazing|awesome|sweet|neat|brilliant|fab|smart) (?:the|your|"
                             r"my|our|this|that|these|those) (?:[a-z0-9]+ ){1,5}(?:is|are|was|were|looks|look|seems|seem)\b|which (?:is|was|means|meant|makes|made|should|"
                             r"would|will)\b(?! (?:you|your|it|best|better)\b)|(?:when|where|whenever|wherever|once) (?!(?:do|does|did|"
                             r"would|will|can|could|should|shall|is|are|was|were|might|may)\b)|who (?:knew|would have|"
                             r"could have|doesnt|does not|dont|do not|wouldnt|would not|isnt|cant|can not)\b|any (?:of (?:these|them|those|our|the)|one of|time|way|day)\b)")
#: "Any colour works with it", "Any of them will do": a sentence opening with "any" that has a verb of its own and
#: names no one it asks ("Any brand you prefer" asks).
_ANY_STATES = re.compile(r"^ any (?:(?!i |we |you )[a-z0-9]+ ){0,6}?(?:is|are|will|would|works|work|ships|ship|comes|come|can|could|"
                         r"should|goes|go|fits|fit|looks|look|sells|sell|has|have) ")
#: A request said as a condition ("If you could tell me ...", "If you would be kind enough to indicate ...", "If I might
#: trouble you for ...").
_IF_YOU_WOULD = (r"(?:if you (?:could |can |would |)(?:(?:be so kind as|be kind enough|be good enough|be so good as) to |kindly |"
                 r"please )?(?:tell|let me know|share|give|say|describe|send|confirm|fill me in|explain|let me in on|indicate|"
                 r"specify|state|advise)|(?:if )?(?:i|we) (?:might|may|could) (?:trouble|bother) you (?:for|to))\b")
#: First person needs and wishes said as statements that ask ("I'd need your size", "I'll need to know which order
#: it is", "I would like your confirmation"), and invitations ("Feel free to tell me ...", "If you tell me your
#: budget, ...").
_NEED_REQUEST = re.compile(r"^ (?:so |ok |okay |right |then |just |and |now |next |first |firstly |lastly |finally |at this "
                           r"(?:time|point|stage) |for now |to (?:start|begin|proceed|continue|[a-z]+ (?:the|your|this|it|"
                           r"that)(?: [a-z]+)?) |for (?:the|your|this|that|these|those)(?: [a-z0-9]+){1,3} )*(?:i|we|id|ill|wed|well) "
                           r"(?:would |will |shall |should |do |just |really |also |still |first |now |then |only |simply |merely |hereby |kindly |must )*(?:need|needs|want|like|require|"
                           r"request|seek|await) "
                           r"(?:(?:to )?(?:know|ask|hear|check|understand|confirm|get|have|learn) |(?:your|yours) |"
                           r"you to (?:confirm|approve|agree|say|ok|okay|authori[sz]e|sign off)\b|(?:one|two|"
                           r"three|a couple of)(?: more| last| quick)? (?:thing|things|detail|details|question|questions)\b|(?:a few|some|a bit|a "
                           r"little|a couple of|a few more|some more|more) |the (?:[a-z]+ )?(?:reason|cause|grounds|date|order|size|colour|color|"
                           r"details|detail|name|item|number|type|kind|make|brand|model|budget|price|connection|material|"
                           r"nature|quantity|delivery|rating)\b|a (?:reason|date|size|yes|go ahead|confirmation)\b)|"
                           r"^ (?:please )?(?:feel free to|do) (?:tell|let|share|give|say|describe|list|send|explain)\b|"
                           r"^ (?:please )?(?:paint|give|show|send|walk|talk|run|fill|take|bring|update|drop|sketch|outline) "
                           r"me (?:a|an|the|your|what|how|through|in|about|more|some|details|everything)\b|"
                           r"^ " + _IF_YOU_WOULD + r"|"
                           # what the agent asks for said as how it would help ("The grounds for it would be most helpful.")
                           r"^ (?:the|your|a|an|some) (?:[a-z0-9]+ ){1,6}(?:would|will) be (?:most |very |really |so |ever so |"
                           r"much |greatly |extremely )?(?:helpful|appreciated|useful|welcome)(?: (?:to me|to us|thanks|thank you))? $|"
                           # a requirement said in the passive ("Your acknowledgement is required before we proceed.")
                           r"^ it is (?:hereby |kindly |respectfully )?(?:requested|required|asked) that you\b|"
                           r"^ (?:your|the|a) (?:[a-z]+ ){1,2}(?:is|are) (?:still |hereby |kindly )?(?:required|needed|necessary|"
                           r"mandatory|requested|sought)\b|"
                           r"^ (?:i|we|id|wed) (?:would |should )?(?:be |am |are )?(?:grateful|glad|delighted|happy|keen|pleased) "
                           r"(?:to )?(?:know|learn|hear|understand)\b|"
                           # ... and in a letter's words ("Dear Madam, I would be most grateful if you would describe ...",
                           # "I should be obliged to learn ...")
                           r"^ (?:(?:dear|madam|sir|maam) )*(?:before (?:i|we) (?:[a-z]+ ){1,4}?)?(?:i|we|id|wed) (?:would |should )?(?:be |am |are )?"
                           r"(?:most |very |so |much |truly |ever so |greatly )?(?:grateful|obliged|thankful) (?:(?:to )?(?:know|learn|hear|understand)\b|"
                           r"if you (?:would |could |can |will )?(?:kindly )?(?:tell|describe|share|say|explain|indicate|inform|"
                           r"let me know|specify|state|provide|give|confirm|advise)\b|"
                           # ... for the words themselves ("I should be most grateful for a few words on what went wrong.")
                           r"for (?:a few|a couple of|some|your) (?:words|lines|details|thoughts|particulars) (?:on|about|regarding|as to)\b)")
#: A question word or auxiliary then its subject: a clause that asks ("..., do I place the order", "..., what do you
#: need"), not one that tells ("..., which is great").
_INVERTED = re.compile(r"^ (?:(?:do|does|did|would|could|can|should|shall|is|are|will|may|was|were|have|has) (?:i|you|we|it|"
                       r"they|this|that|these|there|the|your|my|he|she)|(?:what|which|how|when|where|who|why) (?:[a-z]+ )?"
                       r"(?:do|does|did|would|could|can|should|shall|is|are|will|may|was|were) (?:i|you|we|it|they|this|"
                       r"that|these|there|the|your))\b")
#: A word that ends a question said in place ("the connector you need is which one", "size 10 or what"), or a
#: closing "please" that asks for what it follows ("colour for the hoodie please"; not "one moment please").
_QUESTION_END = re.compile(r" (?:which one|which 1|which|what|or what|or not|or nah|yes or no|how many|how much|when) $|"
                           # a question whose auxiliary was dropped ("everything look good to you")
                           r" (?:everything|all|that|this|it) (?:look|sound|seem) (?:good|right|ok|okay|fine|correct)"
                           r"(?: to you)? $|"
                           # (and what it is for: "Reason for the return please, for the form.")
                           r"(?<! moment)(?<! minute)(?<! second)(?<! sec)(?<! thanks)(?<! you) please"
                           r"(?: for (?:the|my|our|your|a)(?: [a-z]+){1,2})? $|"
                           # a radio call's hand-over ("Number of shirts required, over.", "Wattage requirement, report.")
                           # (not "It's all over.", "game over", "The sale is over.")
                           r"(?<! all)(?<! game)(?<! is)(?<! its)(?<! was)(?<! are)(?<! were)(?<! to) (?:over|report|say again) $|"
                           # a request that ends it ("i can submit it whenever youre ready just say")
                           r" (?:just|then|so) (?:say|say so|say the word|let me know|shout|give me a shout|tell me) $|"
                           # an invitation that ends it ("If you've got any other requirements, I'm all ears.")
                           r" (?:im|i am) all ears $| spill(?: it)? $|"
                           # a condition that asks ("i can check out now if youre happy")
                           r" if (?:you are|youre|your|you re) (?:happy|ok|okay|ready|fine|good)(?: with (?:that|it|this))? $")


#: A condition of the customer's approval before the agent's step ("If you're happy with it, I'll place it now.", "If
#: that all looks right to you, I'll order it."): leave asked, though no question mark.
_IF_CONTENT = re.compile(r"^ (?:so |ok |okay |right |then |well )?(?:if|provided|providing|as long as|so long as|should) (?:you are|youre|you re|"
                         r"you|that|thats|this|it|its|everything|all|all that|"
                         r"the [a-z]+|(?:it|that|this|everything) all)(?: all| both)? (?:be )?(?:happy|ok|okay|fine|good|ready|content|"
                         r"satisfied|all the same|(?:looks?|sounds?|seems?) (?:right|good|ok|okay|fine|correct|alright)|suits?|works?)\b|"
                         # "With your blessing, I'll check out."
                         r"^ (?:so |ok |okay |right |then |well )?with your (?:blessing|permission|ok|okay|approval|consent|go ahead|"
                         r"say so)\b")


#: "just the one or more": a choice of how many, typed without a question mark (not "rated 4 stars or more").
_OR_MORE_END = re.compile(r" or (?:more|two|several|a few) $")
#: A stop that ends a sentence: a message without one may still ask.
_STOP = re.compile(r"[.!?]")
#: Openings of a go-ahead typed without a question mark ("ok to check out", "want me to place it").
_GO_AHEAD_START = tuple(_phrase(p) for p in ("ok to", "okay to", "alright to", "all good to", "good to", "fine to",
                                                "want me to", "you want me to", "u want me to", "happy for me to",
                                                "shall i", "should i", "can i", "could i", "may i", "shall we"))
#: A go-ahead typed last without a stop ("both added ready to confirm").
_READY_END = re.compile(r" (?:ready|good|ok|okay) to [a-z]+(?: (?:it|out|now|the order|the return))? $")
#: "u mean the hoodie or the cable": which one is meant, typed without a stop.
_MEAN_START = tuple(_phrase(p) for p in ("you mean", "do you mean", "did you mean"))
#: A question run on after a statement without a stop ("found some monitors what ports do u need", "jacket in cart
#: shall i place order"): a question word, up to three words, then an auxiliary and its subject, or an auxiliary that
#: asks leave.
_EMBEDDED_QUESTION = re.compile(r"(?<=[a-z0-9])(?<! know)(?<! tell)(?<! show)(?<! see)(?<! understand)(?<! find)(?<! check)"
                                r"(?<! ask)(?<! sure)(?<! find out)(?<! exactly)(?<! is)(?<! get) "
                                r"(?:(?:what|which|how many|how much|how (?:fast|soon|quickly|quick|big|long|bright|heavy|large|small)|when|why)"
                                r"(?: [a-z0-9]+){0,3} (?:(?:do|does|would|will|"
                                r"should|shall|can|could|did|are) (?:you|i|we)|you (?:want|need|like|prefer|wear|use|have|[a-z]+ing))|"
                                r"(?:shall|should) (?:i|we) [a-z]+|(?:do|would|will|did) you (?:want|need|like|prefer|have|use|wear)|"
                                r"anything else (?:you|i)|(?:whats|what is|what are) (?:your|the) [a-z]+) ")


def _run_on_question(clause: str) -> str:
    """A clause without its opening statement when a question is run on after it ("ok found some monitors what ports
    do u need" asks only the ports): the words a topic must be named in to be asked."""
    words = _normalise(clause)
    found = _EMBEDDED_QUESTION.search(words)
    if found is None:
        return clause
    head = _FILLER.sub(" ", words[:found.start() + 1])
    first = head.split()[:1]
    if len(head.split()) < 3 or " or " in head or (first and first[0] in _CLAUSE_QUESTION_START):
        return clause
    return words[found.start():]


#: Chat interjections before a question word ("wait whats wrong with it", "ngl whats your budget"): the question asks.
_INTERJECTION = re.compile(r"^ (?:(?:yo|hey|oh|ah|wait|ngl|tbh|lol|omg|bruh|hmm|um|umm|fr|tho|lowkey|honestly|real quick|quick|ok|okay|so) )+(?=(?:what|whats|"
                           r"which|how|why|when|where|who|whos|do|does|did|is|are|can|could|would|will)\b)")


def _opens_question(words: str) -> bool:
    """Whether a normalised sentence without a question mark asks, by its opening word (after a chat interjection),
    or is a statement that only opens like a question ("What a lovely choice", "Which is great news", "When it is
    faulty we ...")."""
    words = _INTERJECTION.sub(" ", words)
    first = words.split()[:1]
    if not first or first[0] not in _QUESTION_START:
        return False
    return _NOT_A_QUESTION.match(words) is None and not (
        first[0] == "any" and _ANY_STATES.match(words) is not None and " you " not in words and " your " not in words)


#: The lead-in of a checklist that asks ("Two things please: 1) size 2) material", "Quick questions: - size - colour").
_CHECKLIST_LEAD = re.compile(r"^ (?:(?:just|ok|okay|so|and|then) )*(?:(?:one|two|three|four|a few|a couple of|couple of|some|"
                             r"quick|last|final)(?: (?:more|quick|last|final|short))? (?:things?|questions?|details?|bits?|"
                             r"points?|checks?|items?)(?: (?:please|first|for you|to confirm|to check|i need|needed|from "
                             r"you|before (?:i|we|the|your|my|our) [a-z]+|to go))*|(?:[a-z]+ )?please|(?:quick |short |final |the |a )?(?:[a-z]+ )?(?:checklist|check list|"
                             r"questionnaire|form)) $")
#: A numbered or bulleted list item ("1) size", "2. colour", "- brand").
_LIST_ITEM = re.compile(r"^\s*(?:\(?\d{1,2}[).]|\(?[a-e]\)|[-*•])\s*\S")
#: A count of questions before a colon ("I have two questions: ...", "Three quick details to settle: ..."): what
#: follows is what is asked, not examples of an open question.
_QUESTIONS_FOLLOW = re.compile(r" (?:two|three|four|2|3|4|a couple of|a couple|a few|some|few|my|the|last|final|quick) "
                               r"(?:[a-z]+ ){0,2}(?:questions?|details?|things?|points?|bits|items?|specifics|queries|cards?|answers?|"
                               r"figures?|numbers?|blanks?|boxes|fields?)"
                               r"(?: [a-z]+){0,3} $|"
                               # a list heading ("Checklist: the minimum rating, and does it need delivering soon?")
                               r"^ (?:[a-z]+ ){0,2}(?:checklist|check list|questionnaire) $")


#: A tag that ends a message typed without a stop ("..., ok", "... yeah").
_TRAILING_OK = re.compile(r" (?:ok|okay|alright|yeah|right|yes|k) $")
#: A wh-word and up to two words at the end of a message ("... which size", "... what colour tho").
_TRAILING_WH = re.compile(r" (?:which|what|whats) ((?:[a-z0-9]+ ){1,2})$")


def _asks_checklist(raw: str) -> bool:
    """Whether a message asks by a checklist after a lead-in that asks ("Two things please: 1) size 2) material"), or
    by the topics listed after one that counts them ("Two questions before I search: your size and your budget.")."""
    head, colon, tail = raw.partition(":")
    lead = re.split(r"[.!?\n]", head)[-1]
    counted = colon and _COUNTED_LEAD.match(_normalise(lead)) is not None
    if not colon or (_CHECKLIST_LEAD.match(_normalise(lead)) is None and not counted):
        return False
    if _LIST_ITEM.match(tail):
        return True
    fields = [p for p in re.split(r",|\band\b|\bplus\b", re.split(r"[.!?\n]", tail)[0]) if p.strip()]
    if counted and not all(_FIELD_PHRASE.match(_normalise(p)) for p in fields):
        return False  # "Two things to sort: the price dropped and ...": the fields are news, not asked
    return (counted or _QUESTIONS_FOLLOW.search(_normalise(lead)) is not None) and len(fields) >= 2 and all(
        _names_topic(p) for p in fields)


#: A lead-in that counts what follows in the agent's own words ("Let's check two things before we pull away: brand and
#: budget.", "Two wee things and we're dead on: the jacket's size and the cable's plug end.", "Two checks, like mirror
#: and blind spot: size on the jacket, connector on the cable."): the topics listed after it are asked. Not a count of
#: news or notes ("Two things to note: ...", "Two bits of good news: ...").
_COUNTED_LEAD = re.compile(r"^ (?:(?:just|ok|okay|so|and|then|right|now|alright) )*(?:(?:lets|let us) (?:check|sort|settle|cover|do|"
                           r"go over|get|nail down|pin down) |(?:i|we) (?:need|have|ve got|got|still need) |"
                           # ... said of the agent in the third person or a role ("Dealer needs two cards from you: ...")
                           r"(?:the )?[a-z]+ (?:needs|still needs|wants|requires) )?(?:two|three|four|2|3|4|"
                           r"a couple of|a few)(?: [a-z]+)? (?:things?|questions?|details?|checks?|bits?|points?|items?|cards?|"
                           r"answers?|figures?|numbers?|blanks?|boxes|fields?)"
                           r"(?! (?:to )?(?:note|know|mention|report|share|tell|of (?:good |bad )?news))(?: [a-z]+){0,6} $")
#: A listed field: a short noun phrase without a verb ("size on the jacket", "the cable's plug end", "budget").
_FIELD_PHRASE = re.compile(r"^ (?!.* (?:is|are|was|were|has|have|had|s|will|did|does|do|dropped|arrived|shipped|ships)\b)"
                           r"(?:[a-z0-9]+ ){1,6}$")


#: A sign-off that offers help with the customer's own questions ("Let me know if you have any other questions!", "Any
#: questions, just shout!", "If there's anything else I can do, just ask."): it asks for no requirement.
_SIGN_OFF = re.compile(r"^(?: [a-z]+){0,8} (?:any|other|more|further) questions?(?: [a-z]+){0,8} $|"
                       r"^(?: [a-z]+){0,8} (?:anything else (?:i can do|comes up|along the way|i can help (?:you )?with)|ask (?:me )?anything "
                       r"else|help with anything else)(?: [a-z]+){0,4} $")


#: A question that offers more help ("Anything else I can help with?"): alone, it asks what more is needed.
_MORE_HELP = re.compile(r" anything else (?:i can help (?:you )?with|i can do for you|i can get you) ")


#: A question asked for effect, that wants no answer: who in general would do something ("Who even needs a 60-watt
#: lamp?", "Who doesn't love a deal?!"), what could beat an item ("What could be nicer than the silver one?"), or a
#: negated question that praises ("Aren't these just the perfect pair?!").
_RHETORICAL = re.compile(r"^ (?:(?:and|but|so|now|honestly|seriously|well|eh|oh|i mean|really|come on|like) )*(?:who (?:even |really |"
                         r"else |on earth |in their right mind |among us |of us |here |alive )?(?:buys|needs|wants|loves|likes|cares|doesnt|does not|dont|"
                         r"do not|wouldnt|would not|would ever|saw|knew|would have|could have|could resist|can resist)\b|"
                         # ... who would have thought it ("Who'd have thought a 27-inch monitor would cost so little?")
                         r"(?:whod|who d|who would|who could)(?: ever)? (?:have|of) (?:thought|guessed|imagined|believed|known)\b|"
                         # ... who would send back what works ("Who returns headphones that work perfect? Nobody, right?"),
                         # and its own answer, checked ("Nobody, right?")
                         # (not "Who returns the cable, you?")
                         r"(?:who (?:would|could) (?:ever |possibly )?(?:return|send back)|whod (?:ever )?(?:return|send back))\b|"
                         r"who (?:even |ever )?(?:returns|sends back) (?:[a-z0-9]+ ){1,3}(?:that|which) (?:work|works|are|is) (?:perfect|"
                         r"perfectly|fine|great|well)\b|(?:nobody|no one|none)(?: surely| really)?(?: right| eh| yeah| surely)? $|"
                         # ... who could object to it ("Who could say no to a mug at that price?", "Who'd ever turn
                         # down free returns?", "Who will say no to that!", "Now who'd ever say no to a navy hoodie?")
                         r"(?:who (?:could|can|would|will)|whod|who d|wholl)(?: ever| possibly)? (?:object|argue|say no|complain|"
                         r"refuse|disagree|turn (?:it |that |this |them )?down|pass (?:it |that |this )?up)\b|"
                         r"what (?:[a-z]+ )?(?:could|can|would) (?:possibly )?(?:be|look|sound) (?:any )?(?:[a-z]+er|more "
                         r"[a-z]+|better|nicer) than\b|"
                         # ... whether anything beats it ("Is there anything more cosy than wool?"; not "more important than")
                         r"(?:is there|could there be|can there be) (?:anything|something) (?:[a-z]+er|more (?!(?:important|"
                         r"essential|crucial|pressing|urgent|relevant)\b)[a-z]+|better|nicer) than\b|whats not to (?:love|like)\b|"
                         # ... why the agent asks, a question it answers itself ("Why we ask the reason? Only for
                         # statistics.", "Why do I ask?")
                         r"why (?:do |did |would |must |should )?(?:i|we) (?:ask|need|want)(?: (?:for|about))?(?: (?:the|this|that|"
                         r"it|your))?(?: (?:reason|grounds|cause|question|information|info|details))? $|"
                         # ... why pay more than the offer asks ("Why pay more? The Kinetiq pair ... at half the price.")
                         r"why (?:would you |should you |do you |would anyone )?(?:pay|spend) (?:more|extra|full price|twice|"
                         r"double|over the odds)(?: than you need to| for less)? $|why settle for (?:less|second best) $|"
                         # ... a remark on what was said, "huh?" after it ("Rose Gold, huh? Nice pick."; not "Anything
                         # else, huh?")
                         r"(?!(?:what|whats|which|how|why|when|where|who|do|does|did|is|are|will|would|can|could|should)\b)"
                         r"(?!(?:[a-z0-9]+ ){0,3}(?:anything|something|else|more|other|any|need|needs|want|wants)\b)"
                         r"(?:[a-z0-9]+ ){1,4}huh $|"
                         r"(?:isnt|arent|wasnt|werent) (?:that|this|those|these|it|they|(?:the )?(?!(?:you|we|i|ya|u|"
                         r"there)\b)[a-z0-9]+(?: [a-z0-9]+)?) (?:[a-z0-9]+ ){0,3}?(?:just|so|simply|such|truly|absolutely|"
                         # ... or names its praise ("Isn't that teal gorgeous in daylight?")
                         r"stunning|gorgeous|lovely|beautiful|pretty|cute|sleek|adorable|striking|handsome|divine|wonderful|"
                         r"fabulous|fantastic|superb|elegant|a beauty|a treat)\b)")


def _without_idle_sentences(raw: str) -> str:
    """``raw`` without the sentences that ask the shopper nothing: its sign-offs and the questions it asks for effect
    (:data:`_RHETORICAL`); the same string when none."""
    parts = _SENTENCE.findall(raw)
    kept = [part for part in parts if not _SIGN_OFF.match(_normalise(part))]
    if not kept and len(parts) == 1 and "?" in raw and _MORE_HELP.search(_normalise(raw)):
        return raw  # "Anything else I can help with for the sheets?" alone asks what more is needed
    kept = [part for part in kept if not _RHETORICAL.match(_FILLER.sub(" ", _corrected(_normalise(part))))]
    return raw if len(kept) == len(parts) else " ".join(kept)


#: A heading of a few words that a need of "it" or "one" or a request for it after it asks for ("Reason for return, need
#: it for the manifest", "Reason for return. I need one.", "Reason for return please, system need one.", "Reason for
#: the return - give it to me, we'll fix it!"), not a statement ("It shipped Monday, we need it for the audit").
_HEADING_NEEDED = re.compile(r"^ (?!(?:it|its|they|theyre|we|i|you|he|she|this|that|there|theres)\b)(?:[a-z0-9]+ ){1,4}$")
#: A closing clause that names what the sentence said ("Refunds need the receipt, is the policy."): no question.
_NAMES_RULE = re.compile(r"^ is the (?:policy|rule|rules|procedure|process|law|practice)(?: of [a-z ]+)? $")


#: A field named on its own, the whole message or before a bare prompt ("reason for return", "Order number. Let's see
#: it.", "yoga mat colour"), or several joined ("Monitor colour and desk lamp material, quickly.", "Brand preference and
#: connector type, both, stat.", "Budget on the speaker, ballpark, now."): a form's field asks what it names (not "Navy
#: colour.": a value named is told).
_FIELD = (r"(?:(?:the|your) )?(?:(?:reason|reasons|grounds|cause) for (?:the |your |this )?return|"
          r"order (?:number|no|id|date)|(?:(?!(?:got|have|has|had|noted|know|knew|saw|see|need|needs|is|are|was|"
          r"were|my|our|your|the|their|his|her|its|that|this|no|new|same|right|wrong|good|nice|great|ok|okay|and)\b)"
          r"[a-z]+ )"
          r"{0,2}(?:colour|color|size|material|fabric|brand|budget|quantity|"
          r"connector|wattage|weight)(?: (?:preference|type|choice))?(?: (?:on|for) (?:the|your|this|that) [a-z0-9]+(?: [a-z0-9]+)?)?)")
_BARE_FIELD = re.compile(r"^ " + _FIELD + r"(?: (?:and|n|plus) " + _FIELD + r")*(?: please)?(?: for (?:the|my|our|your) [a-z]+)? $")
#: ... and the bare prompts after it: a hand-over, haste, "both", an address ("..., ballpark, now.", "t-shirt size pls,
#: player").
_BARE_PROMPT = re.compile(r"^ (?:(?:go|go on|go ahead|now|please|lets see it|lets hear it|lets have it|over to you|your turn|over|"
                          r"(?:give me|gimme) (?:a|the) (?:number|figure|name)|state yours|yours please|quickly|quick|stat|asap|"
                          r"both|ballpark|roughly|mate|friend|boss|buddy|pal|dude|player|chief|sir|madam|on my mark|chop chop|"
                          r"pronto|sharpish|on the double) ?)+ $|"
                          # what the field is for ("Reason for the return, for the slip.")
                          r"^ for (?:the|my|our|your) [a-z]+ $")


#: An address after a field demanded ("Size, recruit!", "Colour, me lad!"): one or two words, no value, no step told
#: ("Size, done!", "Colour, sorted!", "Size, checked!" tell what is settled).
_VOCATIVE = re.compile(r"^ (?:(?:me|my|you) )?(?!(?:done|sorted|set|ok|okay|fine|good|great|perfect|nice|lovely|tick|check|yes|no|"
                       r"yep|nope|sure|too|also|again|gone|next|first|last|then|covered|noted|confirmed|settled|agreed|next up|"
                       r"please|thanks|cheers|ta)\b)[a-z]+(?<!ed)(?: [a-z]+(?<!ed))? $")
#: The praise or surprise a field's words open an exclamation with ("Lovely colour!", "What a size!"): no field asked.
_EXCLAIMED_PRAISE = re.compile(r"^ (?:(?:the|your) )?(?:what|such|so|how|a|an|love|loving|lovely|gorgeous|beautiful|stunning|cool|"
                               r"awesome|amazing|perfect|fine|brilliant|excellent|fab|fabulous|wonderful|cute|pretty|sweet|"
                               r"great|nice|good|wrong|odd|weird|bold|rich|classic|fun|right|top|best|same|new|free|fair)\b")


def _exclaimed_field(sentence: str) -> bool:
    """Whether an exclamation demands a field named bare, alone or joined, maybe with an address ("Size, recruit!",
    "Colour and size!", "Material and maximum weight!"): a drill's order names what it asks; not praise ("Lovely
    colour!"), a value told ("Navy colour!") nor a field settled ("Size, done!")."""
    clauses = [c for c in _CLAUSE_BREAK.split(sentence) if c.strip(" .!?")]
    if not clauses or len(clauses) > 2:
        return False
    if not sentence.rstrip().endswith("!") and not (len(clauses) == 2 and _BARE_PROMPT.match(_normalise(clauses[1]))):
        return False  # (without the mark, a prompt after it: "Shoe size and hoodie colour, on my mark.")
    head, *rest = [_normalise(c) for c in clauses]
    return (_BARE_FIELD.match(head) is not None and not _EXCLAIMED_PRAISE.match(head)
            and all(_BARE_PROMPT.match(c) or (_VOCATIVE.match(c) and not _names_topic_words(c)) for c in rest)
            and not _named_values(sentence, head, STORE_VALUES))


def _bare_field(raw: str) -> bool:
    """Whether ``raw`` is a field named on its own or several joined (:data:`_BARE_FIELD`), alone or before bare
    prompts."""
    parts = [_normalise(clause) for part in _SENTENCE.findall(raw) for clause in _CLAUSE_BREAK.split(part)
             if clause.strip(" .!?")]
    if not parts:
        return False
    head, *rest = parts
    if _BARE_FIELD.match(head) is not None and all(_BARE_PROMPT.match(part) for part in rest) and not _named_values(
            raw, head, STORE_VALUES):
        return True
    # a field's heading, then its options, its unit or a prompt in sentences of their own ("Size for the Atlas 22. XS,
    # M, XXL.", "Budget. Upper limit, in dollars.", "Number of mugs. Say it."); not a value told ("Size M for the Atlas
    # 22.") nor one value after the heading ("Size for the Atlas 22. M.")
    if "?" in raw or not (_BARE_FIELD.match(head) or _LIMIT_FIELD.match(head)):
        return False
    sentences = [s for s in _SENTENCE.findall(raw) if s.strip(" .!?")]
    if len(sentences) < 2:
        return False
    if _named_values(raw, head, STORE_VALUES) or not all(
            _BARE_PROMPT.match(part) or _FIELD_PROMPT.match(part) for part in parts[1:len(_CLAUSE_BREAK.split(sentences[0]))]):
        return False
    for sentence in sentences[1:]:
        clauses = [_normalise(c) for c in _CLAUSE_BREAK.split(sentence) if c.strip(" .!?")]
        if all(_BARE_PROMPT.match(c) or _FIELD_PROMPT.match(c) or _BARE_FIELD.match(c) or _LIMIT_FIELD.match(c) for c in clauses):
            continue
        words = _normalise(sentence)
        if len(words.split()) <= 10 and _LIST_VERB.search(words) is None and any(
                count >= 2 for count, _ in _named_values(sentence, words, STORE_VALUES).values()):
            continue  # its options ("XS, M, XXL.", "Steel, ceramic or wood.")
        return False
    return True


#: The customer's spending limit or a count named as a field ("Upper limit.", "Spend limit for the lamp", "Number of
#: mugs.").
_LIMIT_FIELD = re.compile(r"^ (?:(?:the|your) )?(?:(?:upper|spend|spending|price|budget|top) limit|number of [a-z]+)"
                          r"(?: (?:for|on) (?:the|your|this|that) [a-z0-9]+(?: [a-z0-9]+)?)?(?: in (?:dollars|pounds|euros|bucks|"
                          r"inches|watts))? $")
#: A prompt after a field: its unit, the word to say it, how many values ("In dollars.", "Say it.", "Two values,
#: please.", "Then I search.").
_FIELD_PROMPT = re.compile(r"^ (?:(?:in (?:dollars|pounds|euros|bucks|inches|watts))|(?:say|tell|name|give)(?: me| us)? "
                           r"(?:it|them|both|one)|(?:one|two|three|2|3) (?:values|answers|things)(?: please)?|please|"
                           r"then (?:i|we) (?:search|look|find|check|add|order|start)(?: [a-z]+)?) $")


#: The agent's own step, then a clause that asks the customer to wait ("I am checking the Vistaro monitors, kindly
#: wait."): a notice (not "Tell me what else you need, I'll wait.").
_WAIT_CLAUSE = re.compile(r"^ (?:please |kindly |pls |just )?(?:wait|hold on|hang on|hang tight)(?: (?:a|one|for a))?(?: (?:little|"
                          r"bit|moment|second|sec|minute|min|while|tick|jiffy|small|small small))*(?: please)? $")
_OWN_STEP_START = re.compile(r"^ (?:(?:i|we) (?:am |are |will |ll |m )?(?:now |just )?[a-z]+|im [a-z]+|were [a-z]+|[a-z]+ing) ")


def _asks_wait(sentence: str) -> bool:
    """Whether ``sentence`` is the agent's own step then a bare request to wait (:data:`_WAIT_CLAUSE`)."""
    clauses = _CLAUSE_BREAK.split(sentence)
    return len(clauses) == 2 and _WAIT_CLAUSE.match(_normalise(clauses[1])) is not None and (
        _OWN_STEP_START.match(_normalise(clauses[0])) is not None)


#: A letter's salutation before its first sentence ("Dear customer, ...", "Dear Sir or Madam, ..."): what follows is read.
_SALUTATION = re.compile(r"^\s*(?:my )?dear\s[^,.!?]{1,40},\s*", re.IGNORECASE)


#: How the summary looks to the customer, its verb bare ("Everything look right to you"): a question without its auxiliary.
_LOOKS_TO_YOU = re.compile(r" (?:look|seem) (?:right|correct|ok|okay|good|alright) to (?:you|ya) ")


def _is_request(raw: str) -> bool:
    """Whether the message asks the shopper something: a question (mark or opening word) or a request."""
    raw = _without_idle_sentences(raw)
    if "?" in raw or _asks_checklist(raw):
        return True
    for sentence in re.split(r"[.!;\n]+", raw):
        sentence = _SALUTATION.sub("", sentence) if "ear" in sentence else sentence  # "Dear customer, I would be ..."
        words = _corrected(_normalise(sentence))
        if _INVERTED_IF.match(words) and "," in sentence:
            # "Should the item arrive damaged, contact us.": a condition, no question, but what follows it may ask
            # ("..., do let me know"), and "Should that suit you, I'll place it." asks leave
            content = _IF_CONTENT.match(words)
            if content and _ACTION_OFFER.search(words[content.end() - 1:]):
                return True
            sentence = sentence.split(",", 1)[1]
            words = _corrected(_normalise(sentence))
        if _NOTICE.match(words) or _LISTING_HEADING.match(sentence) or _asks_wait(sentence):
            # "Please note ...", "Do keep the receipt ...", "Would you believe it, ...": tells, asks nothing; so does a
            # listing verb as a heading ("Sum up: the Terra 5 in Black, one unit.", "List: ..."): it labels what follows
            continue
        if " if " in words and _LATER.search(words):
            continue  # "Let me know if you change your mind later.": an offer for later, nothing asked now
        if _hands_over(sentence):
            return True  # "Cream, gel or spray on the Glow 7. Your call."
        if ("!" in raw and " " + sentence.strip() + "!" in " " + raw and _exclaimed_field(sentence + "!")) or (
                "," in sentence and _exclaimed_field(sentence)):
            return True  # "Size, recruit!", "Colour and size!", "Shoe size and hoodie colour, on my mark."
        if _needs_topic(sentence):
            return True  # "Shoe size I need.", "First, your size on the Atlas 22."
        if _gives_word_for_step(sentence):
            return True  # "Nod and it's yours.", "I'll place it now, unless you say stop."
        if _THIRD_PERSON_DIRECTIVE.match(words):
            return True  # "The customer will state, for the record, XS, M or XXL."
        if _opens_question(words) or _NEED_REQUEST.match(words) or _QUESTION_END.search(words) or _CONSENT_NEEDED.search(
                words) or _REASON_NEEDED.search(words) or _GIVE_REASON.match(words) or _ASKED_TO.match(words) or re.match(_NEED_IT, words) or _PICK_REQUEST.match(words) or (
                _REPLY_GO_AHEAD.match(words)) or _MENU_GO_AHEAD.search(sentence) or (
                _YES_NO_END.search(words) and any(_STEP_FIRST.match(_normalise(c)) for c in _CLAUSE_BREAK.split(sentence))) or (
                _OR_MORE_END.search(words) and not _LIST_VERB.search(words)):
            return True
        if words.startswith(_REQUEST_PHRASES) or re.sub(r"^ just ", " ", words).startswith(_REQUEST_PHRASES) or (
                " let me know " in words) or _SHOOT.match(words):
            return True
        if (content := _IF_CONTENT.match(words)) and _ACTION_OFFER.search(words[content.end() - 1:]):
            return True  # "If you're happy with it, I'll place it now."
        head, *rest = (_normalise(clause) for clause in _CLAUSE_BREAK.split(sentence))
        if any(_INVERTED.match(_FILLER.sub(" ", clause)) and not (_NAMES_RULE.match(clause) or _NOT_A_QUESTION.match(clause))
               or _NEED_REQUEST.match(clause) for clause in rest) or _HEADING_NEEDED.match(head) and any(
                re.match(_NEED_IT, clause) or _REQUEST_FOR_IT.match(clause) for clause in rest):
            # "All three are ready, do I place the order", "To proceed, I will need your size", "Reason for return,
            # need it for the manifest"
            return True
        if not _STOP.search(raw) and ((words.startswith(_GO_AHEAD_START) or _READY_END.search(words))
                                      and _asks_go_ahead(sentence) or words.startswith(_MEAN_START)):
            return True  # "ok to start the return", "want me to go ahead with the refund": typed without a stop
        if _EMBEDDED_QUESTION.search(words):
            return True  # "ok found some monitors what ports do u need": a question run on after a statement
        if not _STOP.search(raw) and _TRAILING_OK.search(words) and _ACTION_OFFER.search(words):
            return True  # "i will put the return thru ok": the agent's step and a tag, typed without a stop
        if not _STOP.search(raw) and any(_opens_question(_FILLER.sub(" ", _normalise(clause))) or (
                _FILLER.sub(" ", _normalise(clause)).startswith(_GO_AHEAD_START) and _asks_go_ahead(clause))
                for clause in _CLAUSE_BREAK.split(sentence)[1:]):
            return True  # "ngl budget matters a lot, whats ur max spend", "..., want me to send it": chat without a stop
        if (not _STOP.search(raw) or _LOOKS_TO_YOU.search(words)) and _BARE_APPROVAL.match(_FILLER.sub(" ", words)):
            return True  # "cart look right to u", "thats everything in ur cart right": approval asked without a mark
        found = _TRAILING_WH.search(words)
        if not _STOP.search(raw) and found and _names_topic(found.group(1)):
            return True  # "added it to cart it comes in 8 9 10 11 which size": a question typed last without a stop
        if any(re.sub(r"^ (?:just|\d{1,2}) ", " ", _normalise(clause)).startswith(_REQUEST_PHRASES)
               or _PICK_REQUEST.match(_normalise(clause)) for clause in _CLAUSE_BREAK.split(sentence)[1:]):
            return True  # "Before I recommend anything, tell me what you need.", "..., just tell me which one."
        if " please " in words and any(f" please {v} " in words or f" {v} please " in words  # "Tell please which order"
                                       for v in ("tell", "let", "share", "confirm", "give", "specify", "describe", "clarify",
                                                 "send")):
            return True
    return False


#: Store values inside idioms ("lightning-fast delivery", "a full day of battery", "blue-light filter"): no value named.
_NOT_A_VALUE = re.compile(r" (?:lightning (?:fast|quick|quickly|speed|speeds)|full (?:on|blast|whack|day|days|hd|refund|range|time|charge|price|"
                          r"stop|details|name|address|amount|list|battery|sun|shade|light|glow|brightness|power|volume|sound|"
                          r"load|lot|catch|haul|squad|team|order|cart|basket|shebang|floodlight|floodlights|beam|strength)|"
                          r"blue light|green light|"
                          # "in full" is no bed size ("Please describe, in full, what you are looking for")
                          r"in full|"
                          # a referee's or a signaller's card or flag ("Yellow card for that?", "Green flag from you"): no colour
                          r"(?:yellow|red|green|white|black) (?:card|cards|flag|flags)|blue chips?|"
                          # "Small money or big money?": the size of a sum, no size of the item
                          r"(?:small|large|big|medium) (?:money|cash|change|sum|sums|amount|amounts|budget|spend|dough|bucks))"
                          r" ")
#: A device beside a tablet ("with a tablet or a phone"): the tablet is a device too, not a form of a product.
_DEVICE = re.compile(r" (?:phone|phones|laptop|laptops|computer|computers|mac|macbook|pc|pcs|ipad|device|devices|tv|console|"
                     r"smartphone) ")
_DEVICE_TABLET = re.compile(r" tablets? ")


def _named_values(raw: str, text: str, in_play: InPlay) -> dict[str, tuple[int, int]]:
    """Per topic, how many distinct values ``text`` (normalised, item names removed) names, and how many of
    those name it on their own: a bare number counts only in a list ("9 or 10?", not "ships in 7 days"),
    and so does a common word ("stick", "full") unless it reads as a value ("in wood", "the queen set",
    "Ceramic" in capitals)."""
    index = in_play.value_index()
    found: dict[str, dict[str, bool]] = {}
    text = _NOT_A_VALUE.sub(" ", text)  # "lightning-fast", "a full day": idioms, no value
    if _DEVICE.search(text):
        text = _DEVICE_TABLET.sub(" ", text)  # "a tablet or a phone": the device, not the form
    for said in set(text.split()):
        # a value said in the plural ("creams or sprays?") names it too
        word = said[:-1] if said not in index and len(said) > 3 and said.endswith("s") and said.isalpha() else said
        for topic, value, capitals in index.get(word, ()):
            phrase = value if word == said else value[:-1] + "s "
            if phrase not in text or (capitals and word != said):
                continue
            if capitals and re.search(r"(?<![\w'’])" + phrase.strip().upper() + r"(?![\w'’])", raw) is None:
                continue
            if topic == "brand" and _PRODUCT_NAME.search(_after(raw, phrase)) is not None:
                continue  # "the Nexworks Atlas 22 jacket" names a product, not a brand to choose
            if f" too{phrase}" in text or f" non{phrase}" in text:
                continue  # "too big, too small, or about right?": a degree, no size offered; "non-stick" is no stick
            # a plural names a kind, not one choice, unless beside another ("creams or sprays?")
            found.setdefault(topic, {})[value] = word == said and _names_on_its_own(raw, text, phrase)
    return {topic: (len(phrases), sum(phrases.values())) for topic, phrases in found.items()}


#: Words around a common word that make it a value ("prefer wood", "in wood", "the queen set", "large one").
_VALUE_BEFORE = ("in ", "the ", "prefer ", "want ", "like ", "need ", "go for ", "choose ", "pick ", "or ", "take ",
                 "rather ", "get ", "with ", "it ")
_VALUE_AFTER = (" one", " ones", " or", " version", " option", " finish", " set", " size", " colour", " color",
                " model", " pair", " variant", " a must", " essential", " important", " ok", " okay", " fine", " alright",
                " good", " necessary", " needed", " required", " suit", " suits")


#: A word's "'s" ("Wood's lovely"): for value matching the word stands alone.
_POSSESSIVE = re.compile(r"(?<=[a-z])['’]s\b", re.IGNORECASE)
#: A name inside a sentence ("the Sonora at $79"): an option named.
_INNER_NAME = re.compile(r"(?<=[a-z0-9,;:\u2014\u2013] )(?!(?:I|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|"
                         r"Christmas|Easter)\b)(?!(?:" + "|".join(m.capitalize() for m in _MONTH_NAMES) + r")\b)[A-Z][\w-]*")
#: A name in the possessive ("the Sonora's rating"), not a contraction ("What's", "It's").
_POSSESSOR = re.compile(r"\b(?!(?:What|That|It|There|Here|Who|Let|He|She|Where|How|When|Why)['’])[A-Z][\w-]*['’]s\b")
_PRODUCT_NAME = re.compile(r"^\s+(?:[A-Z0-9][\w-]*)")


def _after(raw: str, phrase: str) -> str:
    """What follows the first occurrence of normalised ``phrase`` in ``raw`` (its words, any case)."""
    match = re.search(r"\b" + r"\W+".join(map(re.escape, phrase.split())) + r"\b", raw, re.IGNORECASE)
    return raw[match.end():] if match else ""


def _names_on_its_own(raw: str, text: str, phrase: str) -> bool:
    value = phrase.strip()
    if value.isdigit():
        return re.search(f" (?:an?|size) {value} ", text) is not None  # "Are you an 11?", not "ships in 7 days"
    if " " in value or value not in _known_words() or re.search(rf"\b{value}(?:en|len)\b", raw, re.IGNORECASE):
        return True  # (the value's adjective names it: "wooden", "woollen")
    if re.search(f" {value} or (?:whether|not|is|are|was|would|do|does|did|if|should|shall|can|could|will|maybe|perhaps|so|"
                 f"anything|something|whatever|just) ", text) is not None:
        return False  # "delivered swiftly, or whether ...": "or" joins a clause, no list of values
    if re.search(f" {value} (?:with|to|around|out|up|by) ", text) is not None:
        return False  # a verb with its particle ("rather stick with", "go full out"), not the value
    if any(f" {before}{value} " in text for before in _VALUE_BEFORE) or any(
            f" {value}{after} " in text for after in _VALUE_AFTER):
        return True
    return re.search(r"(?:(?<=[\w,:\-\u2013\u2014][\s,])|^\W*)" + value.capitalize() + r"\b", raw) is not None


def _without_item_names(text: str, in_play: InPlay) -> str:
    """``text`` without the in-play items' model and type words (a "9" in "Trek 9" is no shoe size, the
    "bluetooth" of "the Echowave bluetooth speaker" no connector)."""
    for names in in_play.items:
        if names.model and names.noun and _phrase(names.model) in text:
            # the catalog title's words between ("the Terra 9 Stainless Steel Garden Hose", whose colour is asked) too
            text = _titled(names.model, names.noun).sub(" ", text)
        if names.model:
            text = text.replace(_phrase(names.model), " ")
        if names.noun:
            text = text.replace(_phrase(names.noun), " ")
        if names.product_id:
            text = text.replace(_phrase(names.product_id), " ")
    return text


@functools.lru_cache(maxsize=4096)
def _titled(model: str, noun: str) -> re.Pattern[str]:
    """A product's model words, up to three title words and its type ("terra 9 stainless steel garden hose")."""
    return re.compile(" " + re.escape(model) + r"(?: [a-z0-9]+){0,3} " + re.escape(noun) + " ")


def _referenced(text: str, in_play: InPlay, asking: str = "") -> tuple[int, ...]:
    """Indices of the in-play items the lower-cased text names (by id, model words, brand or type). Beside the items
    it names most strongly, every other item its ``asking`` sentences name by a brand or type word that is no part of
    theirs ("How many of the Bolt 3 cables, and what size on the jacket?", "How many mugs, and which colour for the
    hoodie?"; not "What colour for the hoodie? The mug is done.")."""
    named = referenced(text, in_play.items)
    heads = [n.noun.split()[-1] if n.noun.split() else "" for n in in_play.items]  # "the cable" for a charging cable
    if named:
        strong = " ".join(f"{n.brand} {n.model} {n.noun}" for i, n in enumerate(in_play.items) if i in named)
        beside = [i for i, (n, head) in enumerate(zip(in_play.items, heads)) if i not in named and any(
            word and not contains_word(strong, word) and _names(asking, word) for word in (n.brand, n.noun, head))]
        return tuple(sorted((*named, *beside)))
    # a type word only where the message asks ("Great, that's a nice set. Anything in mind for any of them?" names no
    # knife set)
    by_head = tuple(i for i, head in enumerate(heads) if head and _names(asking or text, head))
    if by_head:
        return by_head
    by_other_name = tuple(i for i, head in enumerate(heads) if head in _OTHER_NAME and _OTHER_NAME[head].search(text))
    if by_other_name:
        return by_other_name
    ordinal = _ORDINAL_ITEM.search(text) if len(in_play.items) >= 2 and not in_play.dates else None
    if ordinal is not None:
        position = _ORDINALS.index(ordinal.group(1))
        index = len(in_play.items) - 1 if position == len(_ORDINALS) - 1 else position
        return (index,) if index < len(in_play.items) else ()
    return ()


def _names(text: str, word: str) -> bool:
    """Whether the text says ``word`` (a brand or type), also in the plural (or the singular of "shoes")."""
    return (contains_word(text, word) or contains_word(text, word + "s")
            or (word.endswith("s") and contains_word(text, word[:-1])))


#: Other names of an item's head noun ("the coat" for a rain jacket, "the lead" for a charging cable), taken as the
#: item where the word ends its noun phrase ("What size coat are you after?", not "your top priorities"); a word that
#: also names a topic ("screen", "light") only with "the" ("How big should the screen be?", not "preferences on
#: screen, shipping, color?").
_NOUN_SYNONYMS = {
    "jacket": ("coat", "coats", "anorak", "raincoat"), "cable": ("lead", "cord", "wire"),
    "hoodie": ("top", "jumper", "sweatshirt", "sweater"), "mug": ("cup", "tumbler"),
    "shoes": ("trainers", "sneakers", "runners"), "monitor": ("the screen", "the display"),
    "headphones": ("headset", "cans"), "t-shirt": ("tee", "top"), "tshirt": ("tee", "top"),
    "earbuds": ("earphones", "buds"), "dumbbells": ("the weights",), "lamp": ("the light",), "set": ("sheets", "bedding"),
}
_OTHER_NAME = {head: re.compile(r"\b(?:" + "|".join(names) + r")\b(?=\s+(?:in|for|to|be|do|are|is|you|on|with|and|or|"
                                r"from|that|which)\b|\s*[?.,!:;\-]|\s*$)") for head, names in _NOUN_SYNONYMS.items()}
#: "For the first item", "the second one", "the last product": an item of a multi-item cart by its place.
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "last")
_ORDINAL_ITEM = re.compile(r"\bthe (first|second|third|fourth|fifth|last) (?:item|one|product|thing|line)\b")


#: A specific property that no topic names ("the finish", "what design", "the look"): a question about it is unclear.
_SPECIFIC_THING = re.compile(r" (?:the|a|any|which|what|its|their|your) (?:finish|finishes|look|design|pattern|shape|"
                             r"length|capacity|edition|version|versions|variant|variants|model|trim|texture|"
                             # features of a product no requirement names ("What battery life are you looking for?")
                             r"battery|battery life|resolution|refresh rate|noise cancelling|microphone|mic|remote|lid|"
                             r"handle|strap|pocket|collar|neckline|sleeve|sleeves|heel|sole|base|stand|bulb|dimmer|timer|"
                             r"warranty|storage|memory|speed|thread count|cable length|range|waterproofing|water resistance) ")


#: "How loud do you need it to be?", "How sturdy should it be?": a question about one quality, which no topic may
#: name; unclear, never open.
_HOW_QUALITY = re.compile(r"^ how (?!(?:much|many|else|about|come|do|does|did|can|could|would|will|should|is|are|was|were|important|"
                          r"best|exactly|often)\b)[a-z]+ (?:(?:do|does|would|should|must|will|can|could)\b|(?:is|are) (?!you\b))")
#: A yes/no question ("Do you need it to ...", "Is ... important", "Must they have ...")...
_YES_NO = re.compile(r"^ (?:do|does|did|is|are|was|were|must|should|would|will|can|could|has|have|shall|need) ")
#: ... that names no open thing ("Do you need it to be waterproof?" asks about one; "Do you need it to do anything
#: special?", "Is there a particular feature you need?" ask openly).
_INDEFINITE = re.compile(r" (?:any|anything|something|anyone|everything|what|whats|whatever|which|how|particular|specific|special|"
                         r"certain|else|other|more|further|features?|things?|requirements?|preferences?|needs|must haves?|"
                         r"deal breakers?|dealbreakers?|criteria|priorities|priority|wishes|details|specs?|list|in mind|"
                         r"gift|present|yourself|occasion|for you or|setup|use it|using it|used|use)\b")
#: "You don't want me to hold off, do you?": the agent's step negated, no requirement the customer avoids.
_NOT_WANT_ME = re.compile(r" (?:dont|do not|wouldnt|would not) (?:want|need|like) me to ")


def _open_weak(text: str, norm: str) -> bool:
    """Whether a message that names no topic asks what the customer needs ("What's most important?"); "a particular
    X" asks about X, not openly ("by a particular date?"), and so does a question about a look or finish ("Any
    preference on the finish?"): a specific thing the shopper has no requirement word for is unclear, not open."""
    if _SPECIFIC_THING.search(norm) or any(_HOW_QUALITY.match(_FILLER.sub(" ", sentence)) for sentence in _sentences(text)):
        return False
    if all(_YES_NO.match(_FILLER.sub(" ", sentence)) and not _INDEFINITE.search(sentence) for sentence in _sentences(text)):
        return False  # "Do you need it to be waterproof?", "Is a curved panel important?": one thing asked, yes or no
    norm = _NOT_WANT_ME.sub(" ", _PARTICULAR_NOUN.sub(" ", norm))
    return (_has(norm, _OPEN_WEAK_PHRASES) or _RULE_OUT.search(norm) is not None or _WHAT_MUST_IT.search(norm) is not None
            or _HOW_USE.search(norm) is not None or _GOING_TO.search(norm) is not None
            or any(_TELL_ABOUT.match(_FILLER.sub(" ", sentence)) or _HOW_LIKE.match(sentence) for sentence in _sentences(text))
            or any(sentence.startswith(_ANYTHING) or _WHAT_FOR.search(sentence) is not None
                   for sentence in _sentences(text))
            or _WHAT_YOU.search(norm) is not None)


#: A choice among named options: "between A and B", "A, B or C".
_OPTION_LIST = re.compile(r"\bbetween\s+[\w-]+(?:[\s,]+[\w-]+){0,4}?[\s,]+(?:and|or)\s+[\w-]+|"
                          r"[\w-]+(?:,\s*[\w-]+(?:\s+[\w-]+){0,2})+,?\s+(?:or|and)\s+[\w-]+", re.IGNORECASE)


#: Two names offered as a choice ("from Sonora or Brightix?"): capitalised words inside the sentence.
_NAMES_OR = re.compile(r"(?:(?<=[a-z,] )|^)[A-Z][\w-]+\s+or\s+[A-Z][\w-]+")


#: Two options after a dash or colon that ends the question ("What sort of lamp - bright or soft?").
_DASH_OPTIONS = re.compile(r"(?:[\u2014\u2013:]|\s-)\s*[\w-]+(?:\s[\w-]+)?\s+or\s+[\w-]+(?:\s[\w-]+)?\s*\??\s*$")
_FOR_END = re.compile(r"\bfor(?:\s+(?:the|your|a|an))?\s*$", re.IGNORECASE)


def _offers_options(text: str) -> bool:
    """Whether the message offers a choice among named options that are not themselves open cues ("Any
    preference between oak, pine and maple?" asks about those options, values the shopper may not know,
    not for every requirement; "any deal-breakers or must-haves?" stays open)."""
    found = _OPTION_LIST.search(text) or _NAMES_OR.search(text) or _DASH_OPTIONS.search(text)
    if found is None or _FOR_END.search(text[:found.start()]) is not None:
        return False  # "for sport, work or casual wear?", "for the chair, monitor or lamp": what it is for
    options = _phrase(found.group(0))
    return not (_has(options, _OPEN_STRONG_PHRASES) or _has(options, _OPEN_WEAK_PHRASES))


#: An open noun listed beside topics ("whether any of the items need particular features, sizes or a certain budget?"):
#: any requirement is asked, the topics with it.
_OPEN_NOUN_LISTED = re.compile(r"\b(?:features|requirements|must-haves|must haves|specs|specifications|criteria)\s*,(?:\s*[a-z]+){1,4}"
                               r"\s*,?\s*(?:or|and)\s", re.IGNORECASE)
_EXPLICIT_EXAMPLES = re.compile(r"\be\.?g\b|\bfor example\b|\bfor instance\b|\bsuch as\b|\bthings like\b|\(", re.IGNORECASE)


#: A requirement asked for by a noun that names none in particular ("any particular requirements?", "must-haves?").
_REQUIREMENT_NOUN = re.compile(r" (?:requirements?|must haves?|specs|specifications?|criteria|features|deal breakers?|"
                               r"priorities|wishes|conditions|constraints) ")


def _requirements_asked_apart(text: str) -> bool:
    """Whether a question of its own asks for any requirement by such a noun (or openly, with topics as examples),
    beside another that asks a topic ("Any particular requirements for these? And what's the total budget?"): each
    asks what it asks. Not a question after
    options offered ("Any preference? Black or Navy?") or one whose noun is a topic's ("Any colour requirements?")."""
    if _offers_options(text):
        return False
    for sentence in _SENTENCE.findall(text):
        norm = _corrected(_normalise(sentence))
        if "?" in sentence and (_open_with_examples(sentence) or (
                _REQUIREMENT_NOUN.search(norm) and _open_weak(sentence, norm)
                and not _names_topic_words(norm))):
            return True
    return False


def _open_with_examples(text: str) -> bool:
    """Whether the topics a message names only illustrate an open question before them ("What matters most
    to you, e.g. price or brand?"): the part before the first example marker asks openly and names no topic."""
    marker = _EXAMPLES.search(text)
    if marker is None or marker.start() == 0:
        return False
    if _LIST_ITEM.match(text[marker.end():]):
        return False  # "To narrow this down: 1) budget 2) colour 3) brand?": a checklist of what is asked
    head, tail = text[:marker.start()], _corrected(_normalise(text[marker.end():]))
    norm = _corrected(_normalise(head))
    if not _EXPLICIT_EXAMPLES.match(text[marker.start():]) and _opens_with_wh(tail) and not _has(norm, _OPEN_STRONG_PHRASES):
        return False  # "Needs to be loud - which brand do you trust, and what's the max spend?": questions, no examples
    if _QUESTIONS_FOLLOW.search(norm):
        return False  # "To narrow it down, two questions: your size and the fabric?": the questions themselves
    if marker.group(0) == ":" and not _open_weak(head, norm) and not _names_topic_words(norm):
        return _open_with_examples(text[marker.end():])  # "Before I search: any specs - size, colour, ...?": a lead-in
    # the examples name topics ("price or brand"), not values of one ("black, white, silver": a choice of colour); a
    # unit counted names its topic only ("..., like how many watts?" is no quantity)
    tail = _COUNTED_UNIT.sub(lambda unit: unit.group(0).replace(" how many ", " "), tail)
    named = sum(_has(tail, phrases) for phrases in _TOPIC_PHRASES.values())
    # a dash or colon before one topic asks that topic ("How do you like your hoodies - dark or bright colours?")
    explicit = _EXPLICIT_EXAMPLES.match(text[marker.start():]) is not None
    return (not _names_topic_words(norm) and _open_weak(head, norm)
            and (named >= 2 or (named == 1 and explicit)))


#: Openings of a clause that states a circumstance beside the question ("Since your old pan was from Culina, ...",
#: "..., given the black ones sold out", "Sorry the last one broke, ..."): what it names is not asked.
_CIRCUMSTANCE = tuple(_phrase(p) for p in (
    "if", "since", "as", "because", "given", "once", "now that", "when", "whenever", "while", "whilst", "although",
    "though", "even though", "after", "before", "seeing as", "seeing that", "considering", "sorry", "im sorry", "so sorry",
    "really sorry", "thats a shame", "what a shame", "i see", "i understand", "understood", "got it", "noted", "thanks",
    "thank you", "i know", "i hear", "i appreciate", "i realise", "i realize", "unfortunately", "sadly", "luckily",
    "fortunately", "good news", "great news", "by the way", "fyi", "for reference", "for what its worth", "just so you know",
    # what the agent did or refers to ("Having reviewed our range, ...", "..., which includes Brightix and Sonora, ...")
    "having", "bearing in mind", "keeping in mind", "mind you", "which includes", "which include", "which covers", "which cover", "including", "as per", "further to",
    "following", "with regard to", "with regards to", "regarding", "in regard to"))
#: Not a circumstance: "as for colour, ...", "as to the size", "if you tell me ...".
_NOT_CIRCUMSTANCE = re.compile(r"^ (?:because of what|as (?:for|to|regards|well)|"
                               # the condition is what is asked ("If a brand's a must, let me know.")
                               r"if (?:a|an|the|any|your)(?: [a-z]+){1,2} (?:is |s )?(?:a must|important|essential|key|required|needed|"
                               r"a dealbreaker|a deal breaker|non negotiable)|if you (?:could |can |would )?(?:tell|let|share|give|say|"
                               r"confirm|describe|fill|explain)|if (?:you )?(?:had|have) to (?:pick|choose))\b|^ " + _IF_YOU_WOULD)


def _grounds(asking: str) -> str:
    """The asking sentences without the clauses that state a circumstance beside what they ask: the words a topic
    or value must be named in to be asked ("Since your old pan was from Culina, what material would you like?"
    asks the material, not the brand). A sentence that is all circumstance stays whole."""
    kept = []
    changed = False
    for sentence in _SENTENCE.findall(asking):
        clauses = [_run_on_question(c) for part in _CLAUSE_BREAK.split(sentence) for c in _GROUNDS_JOIN.split(part)
                   if c.strip()]
        if not clauses:  # a sentence of breaks alone ("?\r")
            kept.append(sentence)
            continue
        changed |= any(c not in sentence for c in clauses)
        # with no clause opening as a question, the one that carries the question mark asks ("Abeg, the brand matter
        # to you?", "The shoes settled, I turn to the hoodie: in which colour?"), unless it ends a list of choices
        # ("Over-ear in black, white or something else?")
        # ("..., M, is in my notes; which colour?": a clause that tells a value on record opens no question)
        first = next((i for i, c in enumerate(clauses) if _opens_clause_question(c) and (
            "?" in c or not _RECORDS.search(_normalise(c)))),
                     len(clauses) - 1 if "?" in clauses[-1] and " or " not in _normalise(clauses[-1]) else 0)
        if first and ((len(_normalise(clauses[first]).split()) <= 3 and not _names_topic(clauses[first]))
                      or _BARE_WHICH.match(_normalise(clauses[first]))):
            first = 0  # a tag ("..., is that right?") or a bare "which do you fancy?" asks about what came before;
            # a short question that names its topic ("...; what's your budget?") asks that topic alone
        if first and _EXAMPLE_CLAUSE.match(_normalise(clauses[first])) and not _names_topic(clauses[first]):
            # examples after the question carry its mark ("Are reviews important to you, like four stars and up?"):
            # the clause before them asks
            first = next((i for i in range(first - 1, -1, -1) if len(_normalise(clauses[i]).split()) >= 3), first)
        # a value the agent has on record before the question is told, with the clauses before it that name it
        # ("Your size, Medium, is in my notes; what colour?", "Size 9 noted, and the colour?")
        recorded = max((i for i, c in enumerate(clauses[:first]) if _RECORDS.search(_normalise(c))), default=-1)
        back = first < len(clauses) and _POINTS_BACK.match(_FILLER.sub(" ", _normalise(clauses[first]))) is not None
        asked = [c for i, c in enumerate(clauses) if i > recorded and not _states_circumstance(c) and not (
            (i < first and _states_fact(c) and not _NOT_CIRCUMSTANCE.match(_FILLER.sub(" ", _normalise(c)))
             and not (back and i == first - 1 and _LIST_VERB.search(_normalise(c)) is None and _names_topic(c))
             and not _HEADING.match(_normalise(c))) or (i > first and _states_fact(c, 3) and _TOLD_AFTER.match(_normalise(c))
                                                and not _QUESTION_END.search(_normalise(c)) and not _topic_list(c)
                                                and not _WH_IN_PLACE.search(_normalise(c))
                                                and not _EXAMPLES_TAIL.search(_normalise(c))))]
        # (a clause ending in its question word asks: "For the lamp, the colour you prefer is which?")
        changed |= 0 < len(asked) < len(clauses)
        kept.append(" ".join(asked) if asked else sentence)
    return " ".join(kept) if changed else asking


#: Examples after a question, which carry its question mark ("..., like four stars and up?", "..., say under $50?").
_EXAMPLE_CLAUSE = re.compile(r"^ (?:so |and |or )?(?:like|such as|say|eg|e g|for example|for instance|maybe|perhaps|around|"
                             r"roughly|about) ")
#: A question whose subject points back at a topic said before it ("Reviews and stars, do they matter to you?", "The
#: budget - is it tight?"): the topic said first is what it asks about, not a fact told beside it.
_POINTS_BACK = re.compile(r"^ (?:do|does|did|is|are|would|will|can|could|should|how much do|how much does|how important (?:is|are)) "
                          r"(?:they|it|those|these|that|them|em)\b")
#: Words that say a value is on record already ("noted", "in my notes", "I've filed your colour as Teal", "already
#: chose USB-C"): what they name was told, not asked.
_RECORDS = re.compile(r" (?:noted|filed|recorded|logged|saved|settled|locked in|in my notes|on file|on record|jotted down|"
                      r"written down|taken down|got you down|have you down|already (?:chose|choose|chosen|picked|pick|"
                      r"decided|set|have|got))\b")


#: Where a question joins a statement ("The M arrives Friday so what colour would you like?"): before the question word.
_GROUNDS_JOIN = re.compile(r"\s(?:and|but|so)\s+(?=(?:what|whats|which|how|when|do|does|would|could|can|shall|should|"
                           r"will|is|are)\s+(?:you|your|it|the|size|colour|color|brand|budget|material|connector|i|we)\b)",
                           re.IGNORECASE)
#: A clause after the question that tells a fact of its own subject ("What size, the M arrives Friday?") or of what
#: the question names ("Would you like the black one, which ships tomorrow?").
_TOLD_AFTER = re.compile(r"^ (?:the|our|its|it|they|theyre|we|were|this|that|these|those|there|theres|all|most|some|both|"
                         r"each|delivery|shipping|prices|stock) (?!or\b)|^ (?:rated|priced|costing|reduced|discounted|reviewed) |"
                         r"^ (?:which|that|who) (?:is|are|was|were|has|have|had|"
                         r"ships|ship|comes|come|costs|cost|arrives|arrive|gets|get|sells|sell|runs|run|tends|tend) ")
#: A question word said in place, after the verb ("The office chair, it must be which colour?", "your laptop, it has which
#: port?"): the clause asks, it tells no fact.
_WH_IN_PLACE = re.compile(r" (?:be|is|are|was|were|has|have|had|takes?|needs?|wants?|uses?) (?:which|what) [a-z]+")
#: A noun phrase before the question that heads it ("The stars of the reviews, how many is the least for you?"): what
#: the question asks about, no fact told.
_HEADING = re.compile(r"^ " + _HEADING_PHRASE + r" $")
#: The end of examples listed after the question ("..., the stars and so on?"): they are asked, not told.
_EXAMPLES_TAIL = re.compile(r" (?:and so(?: on| forth)?|etc|et cetera|and the like|and such|and all that|and stuff) $")
#: A question that names nothing of its own ("which d'you fancy?", "which would you prefer?"): it asks among what the
#: clauses before it offer.
_BARE_WHICH = re.compile(r"^ (?:so |and |but )?(?:which|what)(?: one)? (?:d|do|does|would|will|should|could|is|are|youd|you) ")


#: The head noun of a requirement topic, ending a noun phrase in a list of what is asked.
_TOPIC_HEADS = frozenset(("colour", "color", "size", "material", "brand", "budget", "quantity", "connector", "port", "ports",
                          "fabric", "delivery", "rating", "price", "form", "wattage", "weight", "finish", "variant",
                          "version", "date", "reason"))


def _topic_list(clause: str) -> bool:
    """Whether a clause is a list of topics named as noun phrases ("the mug material and your shoe size"), the rest
    of what a request before it asks, not a fact told after it."""
    parts = _normalise(clause).strip().split(" and ")
    return all(part.split()[:1] in (["the"], ["your"], ["its"]) and part.split()[-1] in _TOPIC_HEADS for part in parts)


def _asks_topic(words: str) -> bool:
    """Whether a normalised clause opens as a question or request for a fact ("which size ...", "tell me the colour
    ...", "I will need your size"), not for leave to act."""
    return (words.startswith(_WH_START) or words.startswith(_REQUEST_PHRASES) or _NEED_REQUEST.match(words) is not None
            or _ASK_LEAVE.match(words) is not None)


def _topic_clause(asking: str) -> bool:
    """Whether a clause asks a fact and names its topic ("..., so which size shall I add?") or is a bare "which one"
    after a clause that names it ("It comes in a few materials, so which one would you like me to add?")."""
    clauses = [c for part in _CLAUSE_BREAK.split(asking) for c in _GROUNDS_JOIN.split(part) if c.strip()]
    for i, clause in enumerate(clauses):
        words = _FILLER.sub(" ", _normalise(clause))
        if _asks_topic(words) and (_names_topic(clause) or (i > 0 and _BARE_WHICH.match(words) is not None
                                                           and _names_topic(clauses[i - 1]))):
            return True
    return False


def _values_or(words: str, in_play: InPlay) -> bool:
    """Whether two values of one topic are joined by "or" ("add the cream, or the gel?", "queen or king"): the go-ahead
    asks which of them, a choice of the topic."""
    index = in_play.value_index()
    said = words.split()
    for i, word in enumerate(said):
        if word != "or":
            continue
        before = {t for w in said[max(0, i - 3):i] for t, _, _ in index.get(w, ())}
        after = {t for w in said[i + 1:i + 4] for t, _, _ in index.get(w, ())}
        if before & after:
            return True
    return False


def _names_topic(clause: str) -> bool:
    """Whether a clause names a requirement topic by a word of its own ("budget", "size", "colour")."""
    return _names_topic_words(_corrected(_normalise(clause)))


def _names_topic_words(words: str) -> bool:
    """:func:`_names_topic` of words already normalised and corrected."""
    return any(_has(words, phrases) for phrases in _TOPIC_PHRASES.values())


#: The agent's purpose or next step after what it asks ("..., so I can narrow down the brands", "... in order to check
#: colours", "... and I'll then sort by rating"): to the end of the sentence or a colon (what follows a colon is
#: listed: "Two wee things and we're dead on: the colour and the brand."), it names what the agent will do, not asks.
_PURPOSE = re.compile(r"\b(?:so(?: that)? (?:I|we)|in order (?:to|that)|and (?:I|we)(?:'ll|’ll| will| can| shall| could)?(?: then)?|"
                      r"then (?:I|we)|to help (?:me|us)|which (?:will )?(?:helps?|lets?|allows?) (?:me|us))\b[^.?!;:]*",
                      re.IGNORECASE)


def _without_purpose(grounds: str) -> str:
    """``grounds`` without the agent's purpose or next step after a question or request; unchanged (the same string)
    when none, or when the purpose is all there is."""
    step = _STEP_AFTER.search(grounds)
    if step is not None and grounds[:step.start()].strip(" ,"):
        grounds = _STEP_AFTER.sub(" ", grounds)
    found = _PURPOSE.search(grounds)
    if found is None or not grounds[:found.start()].strip(" ,"):
        return grounds
    kept = _PURPOSE.sub(" ", grounds)
    return kept if kept.strip(" ,.?!") else grounds


#: The agent's own step after what it asks, to the next stop, colon or dash ("Need a size on the jacket before I order
#: materials.": no material asked). Only an ordering step with its object; not a deadline ("before we dock on Friday")
#: nor a step whose options follow a dash ("before I set up - USB-C, Lightning or Micro-USB").
_STEP_AFTER = re.compile(r"\bbefore (?:I|we) (?:order|place|add|book|ship|send|wrap|ring up|put in|write up) "
                         r"(?:the |your |some |any |a |them |it )?[a-z]+\s*(?=[.?!;:\u2013\u2014]|$)", re.IGNORECASE)


def _opens_clause_question(clause: str) -> bool:
    words = _FILLER.sub(" ", _normalise(clause))
    first = words.split()[:1]
    return bool(first) and (first[0] in _CLAUSE_QUESTION_START or words.startswith(_REQUEST_PHRASES)
                            or _NEED_REQUEST.match(words) is not None)


def _states_fact(clause: str, words_at_least: int = 4) -> bool:
    """A clause before the question that tells a fact ("The last one arrived late, what colour ...?"): four words
    or more, no choice offered ("Black, navy or olive - which?") and no topic named as the head of what follows
    ("Colour-wise, ...")."""
    words = _normalise(clause)
    return len(words.split()) >= words_at_least and " or " not in words


def _states_circumstance(clause: str) -> bool:
    words = _FILLER.sub(" ", _normalise(clause))
    return (words.startswith(_CIRCUMSTANCE) and _NOT_CIRCUMSTANCE.match(words) is None
            and _INVERTED.match(words) is None and _NEED_REQUEST.match(words) is None)


#: A verb that makes a short list a statement ("Black or navy are both in stock").
_LIST_VERB = re.compile(r" (?:is|are|was|were|has|have|will|would|can|could|should|do|does|did|ships|ship|works|work|"
                        r"comes|come|looks|look|sells|sell|suits|suit|fits|fit|added|chose|chosen|picked|went|go) ")


def _bare_choice(text: str, in_play: InPlay) -> bool:
    """Whether a short message without a question mark or a question's words offers a choice of values ("so usb-c
    usb-a or bluetooth", "black navy olive or rose gold"): two values of one topic, "or", and no verb."""
    norm = _normalise(text)
    if " or " not in norm or len(norm.split()) > 10 or _LIST_VERB.search(norm):
        return False
    plain = _without_item_names(_corrected(norm), in_play)
    if any(count >= 2 for values in (in_play, STORE_VALUES) for count, _ in _named_values(text, plain, values).values()):
        return True
    # a cue word or value of one topic either side of "or" ("wireless or wired", "snug or roomy", "bluetooth or usb")
    words = _corrected(norm).split()
    i = words.index("or")
    left, right = " " + " ".join(words[max(0, i - 2):i + 1]) + " ", " " + " ".join(words[i:i + 3]) + " "

    def side(part: str) -> set[str]:
        named = {t for t, phrases in _TOPIC_PHRASES.items() if _has(part, phrases)}
        return named | {t for values in (in_play, STORE_VALUES) for t in _named_values(part, part, values)}

    return bool(side(left) & side(right))


#: A value supposed to be the shopper's wish ("I'm guessing Bluetooth is a must", "you'd want black"): a checking tag
#: after it ("is that right?") asks whether that is the requirement.
_SUPPOSED_WISH = re.compile(r" (?:is|are) (?:a )?(?:must|essential|needed|required|necessary|non negotiable) |"
                            r" (?:guessing|guess|assume|assuming|take it|presume|presumably|suppose|reckon) | you(?:d| would)? "
                            r"(?:want|need|prefer|like|rather|wanted|needed|preferred) ")
#: What the customer said, recalled ("You said size 10", "You logged XXL", 'I heard "Navy."').
_RECALLED = re.compile(r" (?:you (?:said|logged|told me|mentioned|chose|picked|gave|asked for|put down|entered|wanted)|i heard) ")
#: A check of it, anywhere in the clause ("..., is that right, or must I go up to 10?").
_CHECK = re.compile(r" (?:(?:is|was) (?:that|this|it)|(?:that|this)) (?:right|correct) ")
#: A tag that checks what was just said ("..., is that right?", "..., correct?").
_CHECK_TAG = re.compile(r" (?:is (?:that|this) (?:right|correct)|(?:that|this) right|right|correct|yes|yeah) $")


#: A phrase that asks openly, then (up to two words that are no example marker) a topic it is about.
_STRONG_ON_TOPIC = re.compile(
    r"(?:" + "|".join(re.escape(p.rstrip()) for p in sorted(_OPEN_STRONG_PHRASES, key=len, reverse=True)) + r")"
    r"(?:(?: (?!(?:like|such|eg|e|g|for|including|say|maybe|perhaps|or|and|especially|particularly|whether|if)\b)[a-z0-9]+){0,2}?|"
    # ... or about it, further on in the clause ("anything else I should know about the size?", "any other thoughts on
    # how much to spend?")
    # (the first word no example marker: "anything else, like price?" asks openly)
    r"(?: (?!(?:like|such|eg|e|g|including|say|maybe|perhaps|or|and|but|so|then|also|especially|particularly|whether|if|"
    r"for (?:example|instance))\b)[a-z0-9]+(?: (?!(?:such|eg|e|g|including|say|maybe|perhaps|or|and|but|so|then|also|"
    r"especially|particularly|whether|if|for (?:example|instance))\b)[a-z0-9]+){0,5}?)? (?:about|on|for|regarding|concerning|re|"
    r"with|in terms of|when it comes to|as to|as for)(?: (?:the|your|its|their|how|what|which|a|an|my|this|that|these|those))*"
    r"(?: (?!(?:like|such|eg|e|g|including|say|maybe|perhaps|or|and|especially|particularly)\b)[a-z0-9]+){0,2}?)"
    r"(?= make(?:s)?\b(?! (?:sure|it|the|a|sense|me|you|them|this|that)\b)|" + "|".join(re.escape(p.rstrip()) for p in sorted({p for ps in _TOPIC_PHRASES.values() for p in ps},
                                                            key=len, reverse=True)) + r")")
#: "..., or is that everything?" after an open question: the alternative to more requirements, no go-ahead.
#: "There's nothing else you need, is there?": a tag that asks whether there is more.
_NOTHING_MORE_TAG = re.compile(r" (?:(?:nothing|no|not anything) (?:else|more|further|other [a-z]+)|(?:thats|that is) (?:all|everything) "
                               r"you (?:need|want|require|are after|re after|were after))\b(?: [a-z]+){0,6} (?:is there|are "
                               r"there|do you|right|yeah|correct|have you|isnt it)(?: [a-z]+)? $")
#: A condition that there is more the customer needs ("If there's anything else, ..."): what follows serves it.
_IF_MORE = re.compile(r"^ (?:and |so |but )?if (?:there is|theres|there are|you have|youve got|youve|you need|you want) (?:anything|something|more|"
                      r"other|any other|any more|further|additional|extra) ")
_THAT_ALL = re.compile(r" or (?:is |was )?(?:that|this) (?:everything|all|it|the lot|the (?:whole|full|entire|complete) [a-z]+) | or is there (?:more|anything|something) | or (?:are )?we (?:good|done|set|all set|sorted) | or (?:shall|should|can|could|may) (?:i|we) "
                       r"(?:just )?(?:start|begin|get started|go ahead|crack on|search|look|get searching|get looking)")
#: Words that describe an option by its rating or delivery ("4.5 stars", "rated 4.8", "ships tomorrow", "arrives Friday").
_DESCRIPTOR = re.compile(r" (?:\d+ )?\d+ stars? (?!(?:more |most |really |very |so |that )?(?:important|essential|enough|a must|"
                         r"minimum|min|or more|or above|or better|and up|plus|matter|matters)\b)| rated \d+(?: \d+)? | (?:ships?|shipping|arrives?|arriving|dispatch(?:es|ed)?|"
                         r"delivered|delivers?|comes?) (?:today|tomorrow|tonight|on [a-z]+|in \d+ days?|by [a-z]+|next [a-z]+|"
                         r"this [a-z]+|free|within [a-z0-9]+ [a-z]+|same day|monday|tuesday|wednesday|thursday|friday|saturday|"
                         r"sunday)\b")
#: A figure that describes an option ("Sonora at $79", "the M is $89", "costs about $40 more").
_PRICE_DESCRIBES = re.compile(r"(?:\bat|\bis|\bfor|\bcosts?|\bcosting|\bpriced|\bonly|\bjust|\baround|\babout|\(|,|-|–|—)\s*"
                              r"(?:about |around |only |just )?[$£€]\s?\d", re.IGNORECASE)
#: A question that names nothing but "which" ("Which one for you?", "Which would you like?").
_BARE_WHICH_QUESTION = re.compile(r"^ which(?: one| ones| of (?:these|those|them|the options|the three|the two))?(?: [a-z]+){0,4} $|"
                                  # ... asked as what the agent needs to know ("... in three forms. I'll just need to
                                  # know which one suits you.")
                                  r"^ (?:i|ill|i will|id|i would|we|well) (?:just |only |still )?need to know which(?: one| ones)?"
                                  r"(?: [a-z]+){0,4} $|"
                                  # "... comes in XS, M and XXL. Yours?"
                                  r"^ (?:and )?(?:yours|for you|your pick|your choice|your preference|your call) $|"
                                  # "Atlas 22 comes in XS, M or XXL. What are you, eh?"
                                  r"^ (?:so |and )?what (?:are|r) (?:you|ya|u|ye)(?: (?:then|eh|mate|love|now|bro))? $|"
                                  # "XS, M, XXL. Pick one."
                                  r"^ (?:(?:please|kindly|just|so|now|oya|go on|ok|okay) )*(?:pick|choose|select)(?: one| 1| any one| "
                                  r"your (?:pick|choice|favourite|favorite))?(?: please| now)? $|"
                                  # "Black, Navy, Olive. Drop your pick."
                                  r"^ (?:(?:please|kindly|just|so|now|go on|ok|okay) )*(?:drop|make|take|name) your (?:pick|choice)"
                                  r"(?: please| now)? $")
#: Kinds of the item counted ("comes in two versions", "three kinds of this keyboard", "in three materials"): what a bare
#: "which one?" after them asks among.
_COUNTED_KINDS = re.compile(r" (?:two|three|four|five|several|a few|a couple of|different) (?:different )?((?:versions|kinds|types|models|"
                            r"variants|styles|materials|colours|colors|sizes|finishes|forms|connectors))\b")
#: A bare request for the preference ("We stock cotton and linen. Kindly indicate your preference."): it asks among the
#: values said before it, and with none said it is unclear, not an open question.
_BARE_PREFERENCE = re.compile(r"^ (?:(?:please|kindly|just|so) )*(?:indicate|state|tell me|let me know|share|confirm|give me) "
                              r"your (?:preference|choice|pick) $")
#: A topic the agent tells about, the subject of "is" ("the price is the same", "delivery is free").
_TOLD_TOPIC = re.compile(r" (?:the |its |their |our |all |both )?(?:price|prices|delivery|shipping|rating|ratings|reviews|review|brand)"
                         r" (?:is|are|was|were|will be|stays|remains|looks|seems) (?!it |they |that |this |there )|"
                         # what reviews report ("A few reviews say it runs small - what do you take?")
                         r" (?:reviews|reviewers|customers|buyers|people) (?:say|said|mention|mentioned|suggest|note|report|"
                         r"claim|complain|agree) (?:that |it |its |the |they |this |these |a |an )")
#: Reviewing what the agent built is checking it, not reviews ("Please review the cart and let me know if it looks right").
_REVIEW_STEP = re.compile(r" (?:review|reviewing|re view) (?:over )?(?:the|your|my|this|our|that) (?:[a-z]+ )?(?:cart|basket|order|"
                          r"list|summary|items|selection|picks|return|details) ")
#: "Should I add one X, or more than that?", "just the one lamp or several?": how many, also beside an offer to add.
_ONE_OR_MORE = re.compile(r" (?:just |only )?(?:one|a single)(?: [a-z0-9]+){0,7} or (?:more|several|a few|two)(?: than (?:that|one|1))?"
                          r"(?: (?:do|would|will) you| you)?(?: (?:need|want|like))? $")
#: "Is one cable enough?", "Is one Atlas 22 rain jacket enough, or do you need more?", "will one do, or a spare?": how
#: many (not "Is one of the colours good enough?", a unit's "one day", "one star", nor a degree, "fast enough").
_ONE_ENOUGH = re.compile(r" (?:is|will|would) (?:just )?(?:one|a single)(?! (?:of|day|week|month|hour|star|inch|watt|dollar|"
                         r"buck|pound|kilo|kg|lb)s?\b)(?: (?!(?:fast|quick|soon|good|big|large|small|bright|long|cheap|light|"
                         r"strong|powerful|loud|high|low|warm)\b)[a-z0-9]+){0,7} (?:be )?enough | a spare ")
#: Another value offered beside the one proposed ("..., or would you rather ceramic?").
#: "..., or go for another colour?": a go-ahead beside another value of the topic asks the topic.
_ANOTHER_OF = re.compile(r" or (?:would you |do you |should i |shall i )?(?:go for|pick|choose|try|prefer|want|fancy|like|get|"
                         r"switch to|change to|opt for|rather) (?:another|a different|some other|other) ")
#: The options the agent gathers ("before I put options together", "to narrow down the options"): no version asked.
_OWN_OPTIONS = re.compile(r" (?:(?:i|we|ill|i ll|well|we ll|let me|let us|lets)(?: (?:can|will|could|should|go|start|then|now|just|"
                          r"first))* [a-z]+(?: out| up| down| together)?|put|pull|find|gather|pick out|look at|narrow|narrow down|"
                          r"compare|show you|suggest|shortlist|line up|round up|dig up|bring you)(?: (?:some|the|a few|few|your|my|"
                          r"good|more|together))* options(?= | $)")
#: "... - a laptop, a tablet, something else?": the last option of a list, no open question.
_ELSE_CLOSES_LIST = re.compile(r",[^,?.!]+,\s*(?:or\s+)?(?:something|anything) else\s*[?.!]*\s*$")
#: "Something more understated, like navy or black?": another thing, its examples values of the topic asked.
_SOMETHING_LIKE = re.compile(r" (?:something|anything) (?:more |else |other )?(?:[a-z]+ ){0,2}(?:like|such as|say|eg|e g|for "
                             r"example|for instance|maybe|perhaps) ")
#: "Is metal more your style?": a taste, not a version to choose.
_YOUR_STYLE = re.compile(r" (?:more |really |quite )?(?:your|my) (?:sort of |kind of |own )?style ")
_RATHER = re.compile(r" or (?:would |do |did )?(?:you )?(?:rather|prefer|want|like|fancy) ")


def _cued_only_in(pattern: re.Pattern[str], text: str, topic: str) -> bool:
    """Whether ``pattern`` matches ``text`` and holds every cue of ``topic`` in it ("how many watts" holds the
    quantity's "how many" and asks the wattage)."""
    return pattern.search(text) is not None and not _has(pattern.sub(" ", text), _TOPIC_PHRASES[topic])


def understand(text: str, in_play: InPlay = NOTHING_IN_PLAY) -> Reading:
    """Read one agent message: what it asks, from its words and the values in play (the rules below), and, where
    they read no ask, the acts a model trained on many writers' messages reads (:mod:`ecomrlve.user.intent_model`;
    never a topic, whose value the shopper would then say)."""
    text = _as_asked(text)
    reading = _rule_reading(text, in_play)
    if reading.asks_anything:
        return _weighed_order_question(reading, text, in_play) if reading.which else reading
    if reading.asks and reading.items and _goes_on(text, in_play, reading.items):
        return reading  # "And for the dog leash?": the question before's topics, about this item (its caller's to read)
    if _answered_itself(text, _OWN_ANSWERED):
        return reading  # "Which colour is best? Navy, of course!": the agent answered its own question, nothing is asked
    plain = None if reading.asks else _normalise(text)  # a statement's words, for the two looks at it below
    if plain is not None and (_announces_own_step(text, plain) or _only_reports(text, plain)):
        # "I'll go ahead and process the return now.": the agent tells its next step, it asks no leave; "I've picked a
        # Teal yoga mat and a size M tee.": it reports what it did, the values it names are told
        return reading
    chance = intent_model.probabilities(text, in_play)
    if chance["asks"] <= _SURE_ASKS:
        return reading
    about = chance["attribute"] > (_SURE if reading.asks else _SURE_ABOUT_OF_STATEMENT)
    if (chance["asks"] > (_SURE_ASKS_TOPIC if reading.asks else _SURE_ASKS_TOPIC_OF_STATEMENT) and about and not in_play.dates
            and not (plain is not None and _only_offers(text))):
        # "Stainless steel or cast iron. Decide, please.", "Black, Olive, Rose Gold... what's calling to you?": a
        # question about a requirement in a shape the rules do not take for one; its topics are still the rules',
        # grounded in the words and values of every sentence of it
        norm = _corrected(_normalise(text))
        topics = _question_reading(text, in_play, norm, reading.stock_out, reading.items, text).topics
        if reading.asks:
            # its asking sentences name no topic: another sentence's topic counts where it offers that topic's
            # values, not where it tells one ("I have filed your colour as Teal. Is there a sum you'd not exceed?")
            topics &= {topic for topic, count in _value_counts(text, norm, in_play) if count >= 2}
        else:
            topics -= _told_topics(text, norm, in_play)
        if topics:
            return Reading(True, topics, stock_out=reading.stock_out, items=reading.items)
    # In a statement (no question mark, no question's or request's shape) the model must be surer, of the act or of
    # the message asking at all ("Let any other requirements be known to me."), and it reads no why: the reason the
    # shopper withholds is said only to a question. A question about a requirement the rules have no topic for is no
    # open question (that makes the shopper say every withheld value).
    if reading.asks:
        sure = _SURE
    else:
        sure = _SURE_OF_ASKING_STATEMENT if chance["asks"] > _SURE_OF_STATEMENT else _SURE_OF_STATEMENT
    orders = bool(in_play.dates)  # which order and why are asked only about the customer's orders
    words = plain if plain is not None else _normalise(text)
    open_ = (chance["open"] > max(sure, _SURE_OPEN) and chance["attribute"] <= _SURE
             and not _waits_or_waives(words, plain is not None))
    # (a go-ahead in a statement at a lower chance: "Atlas 22 in XS. We're good to go, yes")
    go_ahead = plain is not None and _asks_leave_in_statement(plain, chance["asks"])
    confirm = (chance["confirm"] > (min(sure, _SURE_GO_AHEAD_OF_STATEMENT) if go_ahead else sure)
               and not _asks_no_leave(text, words, plain is not None))
    which = orders and chance["which"] > sure
    # (beside a go-ahead it reads, a reason only where it is surer of it: "Want me to crack on with the return on them
    # headphones?", confirm 0.67 and reason 0.43, asks no why)
    reason = reading.asks and orders and chance["reason"] > (max(sure, chance["confirm"]) if confirm else sure)
    if orders and _bare_naming(text):
        # "The hoodie?" about the customer's orders names a line, whatever the model reads (a reason at 0.9 where no
        # item in play is a hoodie): which line, never a go-ahead or why
        which, confirm, reason = True, False, False
    if not (open_ or confirm or which or reason):
        return reading
    return Reading(True, reading.topics, open_, confirm, which, reason, reading.stock_out, reading.items)


#: The two answers offered ("yes or no", "go/no-go"): no denial.
_YES_OR_NO = re.compile(r" (?:yes|go) (?:or )?no(?: go)? ")
#: A third party's word ("They'll say yes and it ships."): no leave asked of the customer.
_THIRD_PARTY_ASSENT = re.compile(r" (?:(?:they|he|she)(?:ll|d)?|someone|somebody|people|everyone|customers|the (?:bank|system|"
                                 r"manager|warehouse|team|courier|boss)) (?:ll |will |would |d |might |may |should |must |can |always |"
                                 r"usually )?(?:say|says|said|nod|nods|nodded|approve|approves|approved|agree|agrees|agreed|"
                                 r"confirm|confirms|confirmed) ")
#: The agent's own information step asked about ("Do I continue reading the list?"): no leave for the purchase.
_INFORMATION_STEP = re.compile(r" (?:continue|keep|go on|carry on|start|stop|finish) (?:reading|listing|looking|searching|"
                               r"browsing|scrolling|showing|explaining|describing|going through|talking) ")
#: The customer's readiness waited for ("Tell me when you're ready.") or a need waived ("I don't need you to confirm
#: anything."): no open question.
_WHEN_READY = re.compile(r" (?:when|once|whenever|if) (?:you re|youre|you are|youve|you ve|you have|u r|ur) (?:all |good and )?"
                         r"(?:ready|set|done|decided|sure|happy) ")
_NEED_WAIVED = re.compile(r" (?:(?:i |we )?(?:dont|do not|wont|will not) need (?:you )?to|no need (?:for you )?to|(?:you )?"
                          r"(?:dont|do not) (?:have|need) to) ")


def _asks_no_leave(text: str, words: str, statement: bool) -> bool:
    """Whether ``text`` (``words`` normalised) asks no go-ahead, however sure the model is: a statement that reports
    the go-ahead given ("You said yes, so I'll place it."), denies something ("You say yes and I say no.") or tells of a
    third party's word ("They'll say yes and it ships."), or a question that asks only what to do ("Where should I
    start?", as the rules read it) or about the agent's own information step ("Do I continue reading the list?")."""
    if statement:
        return bool(_ASSENT_GIVEN.search(words) or _NEGATED.search(_YES_OR_NO.sub(" ", words))
                    or _THIRD_PARTY_ASSENT.search(words))
    return _asks_only_what(text) or _INFORMATION_STEP.search(words) is not None


def _waits_or_waives(words: str, statement: bool) -> bool:
    """Whether ``words`` (normalised) wait for the customer's readiness, or (in a statement) waive a need."""
    return bool(_WHEN_READY.search(words) or (statement and _NEED_WAIVED.search(words)))


def _asks_only_what(text: str) -> bool:
    """Whether every question of ``text`` opens with a question word ("Where should I start?"), none proposing a
    step ("How about I place it?", "What if I check out now?", "How would you feel about checking out?")."""
    questions = [_FILLER.sub(" ", _normalise(s)) for s in _SENTENCE.findall(text) if "?" in s]
    return bool(questions) and all(_opens_with_wh(q) and not _WH_PROPOSES.search(q) for q in questions)


#: A question word that opens a proposal, not a question for a fact.
_WH_PROPOSES = re.compile(r"^ [a-z]+ (?:" + "|".join(_WH_PROPOSING) + r") | about [a-z]+ing ")


def _told_topics(text: str, norm: str, in_play: InPlay) -> set[str]:
    """The topics ``text`` tells one value of, a statement that asks none of them ("Noted so far: brand Lumora,
    material Glass, budget under 60 dollars."), where a statement offering two values asks one ("Stainless steel or
    cast iron. Decide, please.") and one naming only the topic asks it ("Material and weight! Sound off!")."""
    told = {topic for topic, count in _value_counts(text, norm, in_play) if count == 1}
    return told | {"price"} if PRICE.search(text) else told


def _value_counts(text: str, norm: str, in_play: InPlay) -> list[tuple[str, int]]:
    """Per topic, how many of its values ``text`` names, as written ("Slate Grey") and as corrected ("Ceramc")."""
    return [(topic, count) for plain in dict.fromkeys((_normalise(text), norm))
            for topic, (count, _) in _named_values(text, _without_item_names(plain, in_play), in_play).items()]


_OR = re.compile(r"\bor\b", re.IGNORECASE)
#: Words of a question that only goes on with the one before about another item ("And for the X?", "What about the
#: X, then?", "Same for the X?").
_GOING_ON_WORDS = frozenset("and also plus what how about for the a an your my one same then as well too with of".split())


def _goes_on(text: str, in_play: InPlay, items: tuple[int, ...]) -> bool:
    """Whether ``text`` says nothing but the ``items`` it names and words that go on with a question before."""
    rest = _besides_names(split_words(text), in_play, items)
    return bool(rest) and all(w in _GOING_ON_WORDS for w in rest)


def _besides_names(words: list[str], in_play: InPlay, items: tuple[int, ...]) -> list[str]:
    """The ``words`` that are no word of the ``items``' names (a plural "s" aside)."""
    names = {w for i in items for part in (in_play.items[i].brand, in_play.items[i].model, in_play.items[i].noun)
             for w in part.split()}
    return [w for w in words if w not in names and w.rstrip("s") not in names]


#: A question that is a bare noun phrase ("The hoodie?", "That cable?"): it picks out a line, whether or not its noun is
#: one of the items in play.
_BARE_NAMING = re.compile(r"^ (?:the|that|this|these|those)(?: [a-z0-9]+){1,2} $")


def _bare_naming(text: str) -> bool:
    """Whether ``text`` is a question that is only a bare noun phrase (:data:`_BARE_NAMING`)."""
    return text.rstrip().endswith("?") and _BARE_NAMING.match(_normalise(text)) is not None
#: Words beside an item's names that still only name it ("The Brightix pair?", "That one?").
_NAMING_WORDS = frozenset("the a an that this these those one ones pair pairs set sets".split())
#: How an ordered item came packed ("Did it come in a gift box?", "Was it shipped in a padded bag?"): a detail of the
#: line, no fault.
_CAME_PACKED = re.compile(r" (?:come|came|arrive|arrived|ship|shipped|delivered) (?:in|with) (?:a|an|the|its|their) "
                          r"(?:[a-z]+ )?(?:box|bag|package|packaging|case|envelope|wrapping|wrapper|tube|tin|sleeve)\b")


#: What an ordered item came with ("Did it come with the headphones?"): another item of the order, when its name follows.
_CAME_WITH = re.compile(r" (?:come|came|arrive|arrived|ship|shipped|delivered|order|ordered|buy|bought) with (?:the|a|an|your|its|their|"
                        r"that|those) ([a-z0-9]+)")


def _came_with_item(plain: str, in_play: InPlay) -> bool:
    """Whether ``plain`` (normalised) asks what came or was ordered with one of the items in play, by its name."""
    every_item = tuple(range(len(in_play.items)))
    return any(not _besides_names([m.group(1)], in_play, every_item) for m in _CAME_WITH.finditer(plain))


def _asks_by_date(text: str) -> bool:
    """Whether a question of ``text`` ends on a date ("Was the damaged cable from August 2?"): it asks whether that is
    the order, whatever else it names."""
    return any(_date_keys(" ".join(_normalise(s).split()[-3:])) for s in _SENTENCE.findall(text) if s.rstrip().endswith("?"))


def _names_only(text: str, in_play: InPlay, items: tuple[int, ...]) -> bool:
    """Whether ``text`` names the ``items`` and nothing but words that name them."""
    words = split_words(text)
    rest = _besides_names(words, in_play, items)
    return bool(items) and len(rest) < len(words) and all(w in _NAMING_WORDS for w in rest)


def _weighed_order_question(reading: Reading, text: str, in_play: InPlay) -> Reading:
    """A question the rules read as asking which order, weighed by the model. Any question about an order's item that
    the rules read nothing else in reads as "which line?"; the model tells a go-ahead written in words the rules have
    no cue for ("I can send a new one. Want me to?"), a guess at the fault ("Did the strap snap on you?") and an open
    question that names the item ("Anything else the new charger needs?")."""
    chance = intent_model.probabilities(text, in_play)
    if reading.reason:
        # "Why is the one from May going back?": the date names the order the reason is asked of; not where the order
        # itself is asked for ("Tell me the date and what broke.")
        asked = _has(_corrected(_normalise(text)), _WHICH_ASKS_PHRASES)
        return replace(reading, which=False) if chance["which"] < _SURELY_NOT and not asked else reading
    if (reading.confirm or (len(reading.items) >= 2 and _OR.search(text)) or _names_only(text, in_play, reading.items)
            or _bare_naming(text)):
        # (a choice between two ordered items, "Would that be the A or the B?", is which one whatever the model says:
        # it read two such questions of a blind paraphrase set as go-aheads, at which 0.02-0.03 and confirm 0.41-0.54;
        # so is an item named and nothing else, "The Brightix pair?", which a retrained model read at confirm 0.44, and a
        # bare noun phrase, "The hoodie?", where no item in play is a hoodie)
        return reading
    plain = _normalise(text)
    if (_CAME_PACKED.search(plain) or _came_with_item(plain, in_play) or _has(_corrected(plain), _WHICH_ASKS_PHRASES)
            or _asks_by_date(text)):
        # "Did it come in a gift box?", "Did it come with the headphones?": how it came picks out a line, whatever the
        # model reads (0.83 and 0.98 a fault guess); so does a line asked for in words ("No need to explain why, just
        # tell me which item it is.", 0.87) or by its order's date ("Was the damaged cable from August 2?", 0.80)
        return reading
    if chance["which"] < _SURELY_NO_WHICH and chance["confirm"] > _SURE:
        # never a reason here: the reason is what the shopper withholds ("Is it a problem if it's heavy?" asks none)
        return replace(reading, which=False, confirm=True)
    if not (reading.topics or reading.open) and chance["which"] < _SURELY_NOT:
        if (chance["reason"] > _SURE_FAULT_GUESS and _is_request(text) and ("?" in text or not _opens_with_wh(plain))
                and not _has(_corrected(plain), _TOPIC_PHRASES["price"])):
            # (not a line asked by what it cost: "What's the damage?" is the price, not what damaged it)
            return replace(reading, which=False, reason=True)
        if chance["open"] > _SURE_OPEN_ABOUT_ITEM and reading.items:
            return replace(reading, which=False, open=True)
    return reading


#: The model's chances above which it reads that a message asks at all, then each act the rules did not read (in a
#: message the rules read as a statement, a surer chance), and below which a which-order reading beside a reason is
#: dropped. Chosen leaving each training corpus out in turn (scripts/train_intent_model.py's messages) and on two
#: corpus files no rule or model had seen (``corpus24/25.jsonl``, before they joined the training): of their 5,280
#: messages, 0.6 and 0.4 read 9 more right than 0.7 and 0.5 (8 go-aheads) and no statement more as asking. In a
#: statement 0.8 would read 9 more, but 3 training statements as asking ("I'll look up which order that was.", 0.84;
#: "That's everything I need to start the return.", a go-ahead at 0.88). Statements got their guard after two
#: held-out statements (batches 6 and 9) were read as reasons at 0.51 and a which-order question written as a
#: statement as a reason at 0.73 (the only withheld value the model ever made the shopper say in the leak benchmark;
#: a reason is now read only in a question).
#: (``_SURELY_NOT`` was 0.2 until the model was trained with corpus 39-41: it then read two training which-order
#: questions at 0.19 and 0.186 ("What did it cost, and why are you returning it?", "Did it come with the
#: headphones?"); at 0.15 both read right, and corpus 39-41 read by the model before them changes nowhere.)
_SURE_ASKS, _SURE, _SURE_OF_STATEMENT, _SURELY_NOT = 0.6, 0.4, 0.9, 0.15
#: ... the chance above which it reads an open question (which makes the shopper say every withheld value): the
#: hidden-layer model read a rhetorical question after two values told ("Queen, in White. Could there be a more restful
#: combination? I have noted both.") at 0.52, in 30 first turns of the leak benchmark. Leaving each corpus out, 0.55
#: reads 3 messages more right and one open question fewer than 0.4; at 0.65, 9 training open questions are lost.
_SURE_OPEN = 0.55
#: In a statement the model is sure asks (above ``_SURE_OF_STATEMENT``), the chance above which it reads an act. On the
#: same 5,280 messages: 12 more read right (8 open questions, 2 go-aheads, 2 which-order questions), no statement more
#: as asking, every training message still read exactly. Requiring that sureness of every statement (no act read at 0.9
#: alone) would keep "Your other requirements are noted." (open 0.94, asks 0.68) from reading as an open question,
#: but read 3 fewer of the 5,280 and a go-ahead and a which-order question fewer in blind batches 11 and 15.
_SURE_OF_ASKING_STATEMENT = 0.7
#: In a statement that waits on the customer's word (``_WAITS_ON_CUSTOMER``) or that the model is sure asks (above
#: ``_SURE_ASKS_GO_AHEAD``), the chance above which it reads a go-ahead (``_SURE_OF_STATEMENT`` and
#: ``_SURE_OF_ASKING_STATEMENT`` otherwise): writers of many dialects and trades ask leave as the agent's step made
#: conditional, with no question's shape ("Glow 7 cream. Nod and I'll play the hand.", "Atlas 22 in XS. We're good to
#: go, yes"). Leaving corpus 36-38, 39-41 and 42-44 out in turn (each read by a model not trained on them, with rules24):
#: 1, 3 and 2 more go-aheads read right, no statement read as asking; training messages 9 more, none fewer; held-out
#: batches 14, 16 and 17 one or two more, none fewer. At 0.5, 15 more, but two near misses of the rules' tests read as
#: go-aheads ("You say yes and I say no.", 0.72; "They'll say yes and it ships.", 0.51). A statement read as a
#: go-ahead gets what asking it gets (agreement, or the cart's faults at a cost in patience).
_SURE_ASKS_GO_AHEAD, _SURE_GO_AHEAD_OF_STATEMENT = 0.8, 0.75
#: A statement that reports the go-ahead as given ("You said yes, so I've placed it."): it tells, it asks no leave
#: (``_asks_no_leave``).
_ASSENT_GIVEN = re.compile(r" (?:you|u) (?:(?:have|ve|already|just) )*(?:said|told me|gave|given|confirmed|approved|agreed|okd|"
                           r"okayed|(?:did|don) (?:say|talk|tell me|give|confirm|approve|agree))"
                           r"(?: [a-z0-9]+){0,4}? (?:so|and|then|now) ")
#: ... or one that denies something ("You say yes and I say no.", "Say yes and I still can't send it."): the model's
#: chance is no sure sign of a go-ahead there (the logistic regression read that near miss at 0.755, the hidden-layer
#: model at 0.95; leaving each corpus out, blocking the go-ahead here changes no reading).
_NEGATED = re.compile(r" (?:no|not|never|nothing|cant|cannot|wont|dont|doesnt|isnt|arent|wasnt|nor) ")
#: Below the model's chance of a which-order question, the go-ahead it reads (chance above ``_SURE``) replaces the
#: rules' which-order reading. Leaving each corpus file out: 13 more go-aheads read right (five files), none wrong;
#: at 0.2 a training which-order question ("Just to check, is it the Voltix cable?", 0.18) read as a go-ahead. Trained
#: with corpus 39-41 (their "just to check, ..." go-aheads) the model reads it at 0.098: at 0.08 it reads right, and
#: corpus 39-41 read by the model before them changes nowhere (at 0.05 one go-ahead fewer).
_SURELY_NO_WHICH = 0.08
#: ... and above its chance of a reason (which below ``_SURELY_NOT``), the reason replaces it: a question about an
#: order's item that guesses at what is wrong with it. On 6,720 messages (nine corpus files left out in turn, corpus
#: 24-27 each read by a model not trained on it): 6 more reasons read right, no reason read that a message does not
#: ask, every training message still read exactly; at 0.7 and 0.3, 7 more and a training message misread.
_SURE_FAULT_GUESS = 0.8
#: ... or above its chance of an open question, an open question: one that names an ordered item's noun ("Is there
#: anything else the replacement charger must have?" in a RETURN for a charger, open 0.97, which 0.01). No message of
#: the corpus files (each read by a model not trained on it, as above) nor of the training reads otherwise at any
#: threshold from 0.5 to 0.9: none names an ordered item in an open question. Which-order questions that name the item
#: and "else" stay below 0.4 ("Did you order anything else with the charger?", 0.38). At 0.6 one which-order question
#: of blind batch 18 read as open (found by the blind guard, every batch's aggregate only); from 0.7 none of batches
#: 6-18 changes. The tests hold both kinds.
_SURE_OPEN_ABOUT_ITEM = 0.7
#: The model's chance that a message asks, above which (and its chance that it asks about a requirement above
#: ``_SURE``) a message the rules read no ask in is read as a question for its topics. Leaving each of the nine
#: corpus files out: 18 of its 1,008 attribute questions read right that were not, no statement read as asking and
#: no topic read that a message does not ask (reading told values too: 25, and 4 topics not asked; at 0.7, with the
#: seven files of then, 22 and 2 statements read as asking).
_SURE_ASKS_TOPIC = 0.8
#: ... and, in a message the rules read as a statement, its chance that it asks about a requirement: a held-out
#: statement (batch 11) read at 0.92 and 0.52 as asking two topics made the shopper say withheld values in 3 first
#: turns. Leaving each corpus file out, 0.7 reads one attribute question fewer right than 0.5.
_SURE_ABOUT_OF_STATEMENT = 0.7
#: ... and its chance that such a statement asks at all. At first contact with corpus 32 and 33 (960 messages of 16
#: writer styles, read by a model not trained on them) no statement read its topics this way above 0.8; retrained with
#: them, the model read a held-out statement of batch 11 at 0.805 as asking two topics (the shopper would say their
#: withheld values). In the training messages, 18 statements read their topics this way, 10 of them above 0.9.
_SURE_ASKS_TOPIC_OF_STATEMENT = 0.9


#: A form letter's marks: a field's label ("[Attribute 1: the colour]" says "the colour", "[Name: Kai]" "Kai"), the
#: template's own number ("[Template 14b]") and a list's ("[1] the order and [2] what went wrong"): only the field's
#: words are read.
_TEMPLATE_MARK = re.compile(r"\[(?:[A-Za-z]+(?: [A-Za-z0-9]{1,3})?: ([^\[\]:]+)|\d{1,2}|[Tt]emplate [A-Za-z0-9]{1,4})\]")


#: A question taken back ("Now, which colour shall we - oh, silly me, you already said Olive.", "How many do you...
#: never mind, you told me.", "Which colour? Oh, silly me, you already said."): what comes before the retraction in its
#: sentence, or the question just before it, is not asked (not an aside that goes on, "Which colour - never mind the
#: price - do you want?").
_RETRACTED = re.compile(r"(^|[.!?]\s+)[^.!?]*?(?:\s*[-\u2013\u2014]+\s*|\.\.\.\s*|\u2026\s*|,\s*|\?\s*)(?:(?:oh|ah|wait|no|nah|nope|hmm|um|er|"
                        r"sorry|actually|negative|nay)[,!]?\s+)*(?:silly me|scratch that|never ?mind|forget (?:it|that)|my bad|ignore (?:that|me)|"
                        # ... the answer found on record ("Which connector - ah, no, it's right here in your notes: USB-C.")
                        r"(?:it'?s|it is|that'?s|that is|it\u2019s|that\u2019s) (?:right |all )?(?:here |there )?(?:in|on) (?:your|my|the) "
                        r"(?:notes|file|records?)|"
                        r"you(?:'ve| have|\u2019ve)? (?:already|just|literally|clearly|actually) (?:said|told me|told|mentioned|picked|chose|"
                        r"called|gave|named)(?: [\w'-]+){0,3}|"
                        # ... "already" said last ("Size? Oh, you said M already."), or the value said first ("Which
                        # connector? Ah, USB-A - you told me already.")
                        r"you(?:'ve| have|\u2019ve)? (?:said|told me|mentioned|picked|chose|called|gave|named)(?: [\w'-]+){0,2} already|"
                        r"[\w'-]+(?: [\w'-]+){0,2}\s*[-\u2013\u2014,]\s*you(?:'ve| have|\u2019ve)? (?:said|told me|mentioned|picked|"
                        r"chose|called|gave)(?: (?:so|that|it|me))? already)(?=[,.!;:]|\s*$)",
                        re.IGNORECASE)


def _as_asked(text: str) -> str:
    """``text`` as it asks: without the questions it takes back (:data:`_RETRACTED`), its last sentence marked as the
    question it is where it names a field and stops without a mark (:data:`_UNMARKED_FIELD`)."""
    text = _RETRACTED.sub(lambda m: m.group(1), text) if _RETRACTED.search(text) else text
    last = _SENTENCE.findall(text)[-1:] if text.rstrip()[-1:].isalnum() else []
    return text.rstrip() + "?" if last and _UNMARKED_FIELD.match(_normalise(last[0])) else text


#: A field named as the last words of a message, with no mark after it ("Got it. Reason for returning", "Anything else
#: to look for", "Special requests for any item", "The Elite 5 leash or the Summit 9 leash"): chat and markdown
#: assistants drop the question mark, the customer still reads a question.
_UNMARKED_FIELD = re.compile(r"^ (?:(?:the )?(?:reason|cause|grounds) (?:for|of) (?:the |your |this )?(?:return|returning|sending "
                             r"it back)(?: it| them| the [a-z0-9 ]+)?|anything (?:else|more|further) (?:to look for|to look out "
                             r"for|i should know|you need|you want)|(?:any )?(?:other |special |further )(?:requests|requirements|"
                             r"needs|wishes|features|preferences)(?: for [a-z0-9 ]+)?|the [a-z0-9 ]+ or the [a-z0-9 ]+) $")


def rule_reading(text: str, in_play: InPlay = NOTHING_IN_PLAY) -> Reading:
    """What the rule layer alone reads in ``text`` (:func:`understand` without the model: to measure what it adds)."""
    return _rule_reading(_as_asked(text), in_play)


def _rule_reading(text: str, in_play: InPlay) -> Reading:
    """:func:`rule_reading` of a ``text`` already read as asked (:func:`_as_asked`)."""
    text = _TEMPLATE_MARK.sub(lambda m: m.group(1) or "", text)
    norm = _corrected(_normalise(text))
    stock_out = _has(norm, _STOCK_OUT_PHRASES)
    bare_field = _bare_field(text)  # "Budget. Gimme a number.": the field is what the prompt after it asks
    asks = (_is_request(text) or bare_field or _bare_choice(text, in_play)) and not _answered_itself(text)
    # (the asking sentences, where the items beside the named ones are looked for, only where they are used)
    asking = _asking_part(text) if asks or in_play.items else text
    items = _referenced(text.lower(), in_play, asking.lower()) if in_play.items else ()
    if not asks:
        return Reading(False, stock_out=stock_out, items=items)
    reading = _question_reading(text, in_play, norm, stock_out, items, text if bare_field else asking)
    if reading.confirm and not reading.topics and in_play.items and asking != text:
        # a go-ahead is asked for what its summary names ("The jacket in XS and the Bolt 3 cable are in the cart. Is it
        # okay that I go to checkout?")
        return replace(reading, items=_referenced(text.lower(), in_play, text.lower()))
    return reading

#: A bare "How much?" ("So how much, roughly?"), which asks the amount of whatever the message's heading names.
_BARE_HOW_MUCH = re.compile(r"^ (?:(?:so|and|ok|okay|right|then|well) )*how much(?: (?:then|exactly|roughly|max|tops|in total|"
                            r"total|about|more or less))? $")
#: A heading sentence: a noun phrase of one to five words, no verb of its own or person ("Spending limit.", "Your
#: price range!"; not "The price is fine." nor "I checked the price.").
_MONEY_HEADING = re.compile(r"^ (?!.* (?:is|are|was|were|s|i|we|you|it|its|has|have|do|does|did|will|can|checked|found)"
                            r" )(?:[a-z0-9]+ ){1,5}$")


def _money_heading(text: str) -> bool:
    """Whether a sentence of ``text`` is a heading that names the money and not a count ("Spending limit. How much?",
    "Your price range. How much?"), so that a bare "How much?" after it asks the budget; "Lamps. How much?" and
    "Number of lamps. How much?" still ask how many."""
    for sentence in _SENTENCE.findall(text):
        words = _normalise(sentence)
        if "?" in sentence or not _MONEY_HEADING.match(words):
            continue
        if _has(words, _TOPIC_PHRASES["price"]) and not _has(words, _TOPIC_PHRASES["quantity"]):
            return True
    return False


#: A reason given after the request, to its sentence's end ("Kindly state your budget, as the Brightix, Sonora and
#: Kinetiq models vary in price.", "..., since they range from $30 to $200."): a circumstance, its values not offered.
_BECAUSE_TAIL = re.compile(r",\s*(?:as|since|because|seeing as)\s+(?:the|they|these|those|it|its|our|prices|some|all|most|many)\b"
                          r"[^.?!:;]*(?=[.?!]|\s*$)", re.IGNORECASE)


#: What an item still needs, said of the item ("the Atlas 22 still needs a size and the Bolt 3 a connector"), not of the
#: agent or the customer ("I need ...", "you need ...").
_ITEMS_NEED = re.compile(r"^ (?!(?:(?:so|and|but|ok|okay) )?(?:i|we|you|id|ill|youll|youd)\b)[a-z0-9 ]*? (?:needs|still needs|want|wants|"
                         r"requires|need|still need) ((?:[a-z0-9]+ )+)$")
#: A list without a verb ("for the Core 4 hoodie a colour for the Trek 9 shoes a size").
_FIELD_LIST = re.compile(r"^ (?!.* (?:is|are|was|were|has|have|had|s|will|did|does|do|got|arrived|shipped|ships|sold|went)\b)"
                         r"(?:[a-z0-9]+ ){2,16}$")
#: A request that points back at what was said before it ("What are they to be?", "Fill me in on both", "Hit me with
#: both.", "Tickets for both, please.", "What would you like?").
_BACK_REQUEST = re.compile(r"^ (?:(?:please|kindly|just|so|now|then|ok|okay) )*(?:both(?: please)?(?= $)|what (?:are|is|will|would) (?:they|it|those|these)"
                           r"(?: be)? (?:to be|going to be|be)|what would you like|(?:[a-z]+ )?for (?:both|the two|each)|"
                           r"(?:fill me in|hit me|give me|tell me|let me know|sort me out|name)(?: (?:on|with|about))? (?:both|them|"
                           r"those|these|the two|each))\b")


#: How the item feels or sits in the customer's hands ("Which feels natural in your hands?"): no delivery asked.
_FEELS_IN_HAND = re.compile(r" (?:feels?|feeling|sits?|sitting|fits?|natural|comfortable|comfy|nice|good|right|lovely|heavy|light)"
                            r"(?: [a-z]+)? in (?:your|ur|the) hands? ")
#: A number the customer has in mind for an item, with no count asked ("Got a number in mind for the headphones?"):
#: the budget.
_NUMBER_IN_MIND = re.compile(r" (?:a|any|the|what|which) (?:rough |ballpark |round |top )?number (?:in mind|you have in mind|"
                             r"youre thinking|you are thinking|you had in mind)(?! (?:of|for how many)\b)")
#: The customer's ceiling, the most they will spend ("Tell me your ceiling for the speaker.", "budget ceiling"), not a
#: ceiling lamp or fan.
_SPEND_CEILING = re.compile(r" (?:your|ur|the|a|my) (?:spend |spending |price |budget |cash )?ceiling(?!s? (?:lamp|light|fan|mount|"
                            r"height|rose|fitting|tile|pendant|hook)s?\b)")
#: How many days the customer can wait for it ("How many days can you hold out before the speaker has to be aboard?"):
#: the delivery.
_DAYS_TO_WAIT = re.compile(r" how (?:many|much) (?:days|weeks|time) (?:can|could|would|will|do|are) (?:you|ya) (?:happy to |able to )?"
                           r"(?:wait|hold out|hang on|last|manage|give|go|spare)\b")


def _question_reading(text: str, in_play: InPlay, norm: str, stock_out: bool, items: tuple[int, ...],
                      asking: str) -> Reading:
    """What ``text``, taken as a question or request to the shopper, asks in its sentences ``asking`` (``norm``: its
    corrected normal form)."""
    norm_asking = norm if asking is text else _corrected(_normalise(asking))
    orders = bool(in_play.dates)  # the customer's orders are in play: "which" asks which of them is meant
    # why they return it: asked only about a past order (not in an idiom: "in time trouble")
    reason = orders and _asks_reason(_IDLE_CUE.sub(" ", asking))
    dates = [k for k in _date_keys(norm_asking) if k in in_play.date_keys()]
    # "How do you mean, it's not right?" asks what the customer meant, not which order
    which = orders and (_has(_MEANING.sub(" ", norm_asking), _WHICH_PHRASES) or len(set(dates)) >= 2
                        or (not reason and (" date " in norm_asking or _has(norm_asking, _WHICH_PAST_PHRASES)
                                            or (" which " in norm_asking and _has(norm_asking, _ORDER_WORDS)))))
    go_ahead = _asks_go_ahead(asking)
    confirm = go_ahead or _TAG_QUESTION.search(text) is not None
    nothing_more = "?" in text and any(_NOTHING_MORE_TAG.search(_normalise(s)) for s in _SENTENCE.findall(asking))
    if confirm and not go_ahead and nothing_more:
        confirm = False  # "Nothing else you're after, right?": the tag checks there is no more, it asks no leave
    # topics and values count where they are asked, not in a circumstance stated beside the question
    # ("..., as the Brightix and Sonora models vary in price": why it is asked, its values not offered)
    untold = _BECAUSE_TAIL.sub("", asking) if "," in asking and _BECAUSE_TAIL.search(asking) else asking
    grounds = _without_purpose(_grounds(untold if untold.strip(" ,") else asking))
    grounds = _IDLE_CUE.sub(" ", grounds) if _IDLE_CUE.search(grounds) else grounds
    norm_grounds = norm_asking if grounds is asking else _corrected(_normalise(grounds))
    # the verb of a go-ahead is no topic ("Want me to pay for it now?", "Shall I ship it?")
    cue_text = _OWN_STEP.sub(" ", _NOT_WAIT.sub(" ", _ACTION_OFFER.sub(" ", norm_grounds)) if confirm else norm_grounds)
    cue_text = _FEW_MORE.sub(" more details ", _WEIGHT_GIVEN.sub(" ", _SHADE_PART.sub(" lampshade ", cue_text)))
    cue_text = _EXPRESS_VERB.sub(" ", cue_text)  # "your express consent" asks no express delivery
    cue_text = _FIGURE_OF_SPEECH.sub(" ", cue_text)  # "our star performers", "multiple choice": no rating, no count
    if " hand" in cue_text:
        cue_text = _FEELS_IN_HAND.sub(" ", cue_text)  # "Which feels natural in your hands?" asks no delivery
    cue_text = _REVIEW_STEP.sub(" ", cue_text)  # "Please review the cart and let me know ..." asks no rating
    cue_text = _PIECES.sub(r"\1 pieces ", cue_text)  # "how many pcs?" counts pieces, it names no computer
    cue_text = _MATERIAL_ADJECTIVE.sub(" ", _NOT_WEIGHT.sub(" ", _DEVICE_SIZED.sub(" ", cue_text)))
    cue_text = _EXCEPT_TOPIC.sub(" ", _SCREEN_HAS.sub(" the monitor ", cue_text))  # "what else should the screen have?" asks no screen size  # "how much weight do you put on reviews?" asks no weight
    if confirm and any(_BARE_ACTION.match(_corrected(_normalise(s))) for s in _SENTENCE.findall(grounds)):
        cue_text = _SHIP_STEP.sub(" ", cue_text)  # "Ship it?", "Dispatch the order?" ask leave, no delivery wish
    if not _has(cue_text, _WHEN_PHRASES):
        cue_text = _WE_SHIPPING.sub(" ", cue_text)
    cue_text = _PAPER_FORM.sub(" ", _SHIPS_AFTER.sub(" ", _PAY_STEP.sub(" ", cue_text)) if confirm else cue_text)
    topics = {topic for topic, phrases in _TOPIC_PHRASES.items() if _has(cue_text, phrases)}
    if len(topics) > 1 and _TOLD_TOPIC.search(cue_text):
        # "... and the price is the same; which would suit you?": a topic the agent tells about is not asked
        told = _TOLD_TOPIC.sub(" ", cue_text)
        topics = {topic for topic, phrases in _TOPIC_PHRASES.items() if _has(told, phrases)} or topics
    if _ONE_ENOUGH.search(norm_grounds) or _ONE_OR_MORE.search(norm_grounds):
        topics.add("quantity")
    if _USE_WITH.search(norm_grounds):
        topics.add("connector")
    if _BY_DAY.search(norm_grounds) or (not orders and (_BY_DATE.search(norm_grounds) or _WITHIN_DAYS.search(norm_grounds))):
        topics.add("shipping")
    if _BRIGHT.search(norm_grounds):
        topics.add("wattage")
    if " number " in norm_grounds and _NUMBER_IN_MIND.search(norm_grounds) and not topics - {"quantity", "price"}:
        topics.discard("quantity")  # "Got a number in mind for the headphones?" asks the budget
        topics.add("price")
    if " ceiling" in norm_grounds and _SPEND_CEILING.search(norm_grounds):
        topics.add("price")  # "Tell me your ceiling for the speaker.": the most the customer will spend
    if " days " in norm_grounds or " weeks " in norm_grounds:
        if _DAYS_TO_WAIT.search(norm_grounds):
            topics.add("shipping")  # "How many days can you hold out before it has to be here?"
    if ("screen" in topics or "size" in topics or _BIG_SCREEN.search(norm_grounds)) and (
            _SCREEN_SIZE.search(grounds.lower()) or _SCREEN_SIZE.search(norm_grounds)
            or (topics == {"size"} and asking is not text and _SCREEN_SIZE.search(text.lower()))):
        # "what size monitor?" asks the screen's size; so does "How big?" after a heading "Screen size!"
        topics.discard("size")
        topics.add("screen")
    if "quantity" in topics and _WEAR.search(cue_text) and _cued_only_in(_NUMBER, cue_text, "quantity"):
        topics.discard("quantity")  # "Which number of shoe are you wearing?" asks the size worn
        topics.add("size")
    if "size" in topics and len(topics) > 1 and not _has(_WEAR.sub(" ", cue_text), _TOPIC_PHRASES["size"]):
        topics.discard("size")  # "what colours do you usually wear?" asks the colour
    if "quantity" in topics and _cued_only_in(_COUNTED_UNIT, norm_grounds, "quantity"):
        topics.discard("quantity")  # "how many watts" asks the wattage
    if "size" in topics and _cued_only_in(_BIG_BUDGET, cue_text, "size"):
        topics.discard("size")  # "How big is your budget?" asks the budget
    if "size" in topics and _cued_only_in(_WHICH_SUITS, cue_text, "size"):
        topics.discard("size")  # "Leather or mesh, which fits your grid?" asks which suits, no size
    if "screen" in topics and _cued_only_in(_COUNTED_SCREEN, cue_text, "screen"):
        topics.discard("screen")  # "how many screens?" asks how many
    if "quantity" in topics and _cued_only_in(_NUMBER_OF_YOUR, cue_text, "quantity"):
        topics.discard("quantity")  # "the number of your foot" asks a size, not how many
    if "quantity" in topics and _cued_only_in(_OWN_PICKS, cue_text, "quantity"):
        topics.discard("quantity")  # "I'll narrow it down to a couple" counts what the agent shows
    if "quantity" in topics and len(topics) > 1 and _cued_only_in(_HEADED_COUNT, cue_text, "quantity"):
        topics.discard("quantity")  # "The stars of the reviews, how many at least?" counts the stars
    if "price" in topics and " figure" in cue_text and _cued_only_in(_FIGURE_VERB, cue_text, "price"):
        topics.discard("price")  # "how heavy a set you figure you can handle?" reckons, it names no figure of money
    if "price" in topics and _cued_only_in(_TOPIC_HOW_MUCH, cue_text, "price"):
        topics.discard("price")  # "Screen size how much you need?" asks the size
    if "quantity" in topics and (_cued_only_in(_HOW_MUCH_OF, cue_text, "quantity")
                                 or _cued_only_in(_TOPIC_HOW_MUCH, cue_text, "quantity")):
        topics.discard("quantity")  # "how much of a budget?", "how much power?": the amount of something else
    if "quantity" in topics and _cued_only_in(_DEGREE, cue_text, "quantity"):
        topics.discard("quantity")  # "how much of a priority is delivery?" weighs delivery, it asks no amount
    if "price" in topics and len(topics) > 1 and _cued_only_in(_DEGREE, cue_text, "price"):
        topics.discard("price")  # "How much you care about the rating?" weighs the rating, it asks no budget
    if " how much " in _TOPIC_HOW_MUCH.sub(" ", _HOW_MUCH_OF.sub(" ", _DEGREE.sub(" ", norm_grounds))) and "price" not in topics:
        topics.add("quantity")
    if topics == {"quantity"} and asking is not text and " how many " in norm_grounds:
        # a unit said as the heading before a bare "how many" ("Watts. How many do you want?") counts that unit: its
        # topic is asked, not how many to buy ("Mugs. How many?" still counts mugs)
        head = _normalise(_SENTENCE.findall(text)[0])
        if _MONEY_HEADING.match(head) and _COUNTED_UNIT.search(head + norm_grounds.lstrip()):
            topics = {t for t, phrases in _TOPIC_PHRASES.items() if _has(head, phrases)} - {"quantity"} or topics
    if topics == {"quantity"} and asking is not text and _BARE_HOW_MUCH.match(norm_grounds) and _money_heading(text):
        topics = {"price"}  # "Spending limit. How much?": the heading names the money the bare "How much?" asks
    if _PRICE_FIGURE.search(grounds):
        topics.add("price")
    # "Which brand: Sonora at $79 with 4.5 stars, or Aurix?": what only describes the options is not asked
    described: set[str] = {t for t in ("rating", "shipping") if t in topics
                           and not _has(_DESCRIPTOR.sub(" ", cue_text), _TOPIC_PHRASES[t])}
    if _PRICE_FIGURE.search(grounds) and _PRICE_DESCRIBES.search(grounds) and not _has(cue_text, _TOPIC_PHRASES["price"]):
        described.add("price")
    if go_ahead and described == {"price"} and topics == {"price"}:
        topics, described = set(), set()  # "Should I confirm the order at $59?": the figure describes what is confirmed
    cued = set(topics)
    plain = _without_item_names(_normalise(_POSSESSIVE.sub(" ", grounds)) if _POSSESSIVE.search(grounds) else norm_grounds,
                                in_play)
    values = _named_values(grounds, plain, in_play)
    if cued - {"brand"} and values.get("brand", (0, 0))[0] == 1 and _POSSESSOR.search(grounds):
        del values["brand"]  # "Is the Sonora's 4.5 rating good enough?": the brand owns what is asked
    # "How many pairs, and may I then complete the order?": the go-ahead asked in a clause of its own beside the topic
    beside_topic = bool(cued) and _go_ahead_after_topic(asking)
    confirm, go_ahead = confirm or beside_topic, go_ahead or beside_topic
    if confirm and not go_ahead and (cued or any(words for _, words in values.values())):
        confirm = False  # "Lightning, right?", "You'd want it by Friday, right?" check the value or wish, no leave asked
    if go_ahead and any(words for _, words in values.values()) and _SUPPOSED_WISH.search(norm_grounds) and not (
            _asks_go_ahead(_CHECK_TAG.sub(" ", norm_grounds))):
        confirm = go_ahead = False  # "I'm guessing Bluetooth is a must, is that right?" checks the wish, no leave asked
    recall = asking if _RECALLED.search(norm_asking) else text if _RECALLED.search(norm) else ""
    if go_ahead and recall and _CHECK.search(norm_asking) and not _asks_go_ahead(_CHECK.sub(" ", norm_asking)):
        # "You logged XXL, is that right?", 'I heard "Navy." Is that right?': the check is of the value the customer
        # gave, no leave asked
        recalled = set(_named_values(recall, _without_item_names(_corrected(_normalise(recall)), in_play), in_play))
        if recalled:
            topics |= recalled
            cued |= recalled
            confirm = go_ahead = False
    if confirm and (values or cued) and _SEARCH_FOR.search(norm_asking):
        confirm = False  # "Shall I look for ceramic?" asks whether ceramic is wanted
    for topic, (count, words) in _named_values(grounds, plain, STORE_VALUES).items():
        # "USB-C" is a connector even where no item in play has one; "spray" a form beside an in-play "gel"
        in_count, in_words = values.get(topic, (0, 0))
        values[topic] = (max(count, in_count), max(words, in_words))
    if any(count >= 2 for count, _ in values.values()):
        for topic in _identifying_values(grounds, in_play) - cued:
            if values.get(topic, (0, 0))[0] == 1:
                del values[topic]  # "The Nexworks one - XS, M or XXL?": the brand picks the item, the list is asked
    for topic, (count, words) in values.items():
        if count >= 2 or (words and not confirm):
            topics.add(topic)
    if "screen" in topics and "size" in topics - cued:
        topics.discard("size")  # "The screen, the small one or the large one?": the sizes named are the screen's
    if described and topics - described and (values or _INNER_NAME.search(grounds)):
        topics -= described  # (only options named are described: "the cheapest one that ships tomorrow?" asks both)
    listed = any(count >= 2 for count, _ in values.values())
    values_in_play = in_play
    opening = _FILLER.sub(" ", norm_grounds)
    if confirm and any(_IF_MORE.match(_normalise(sentence)) for sentence in _SENTENCE.findall(asking)):
        confirm = go_ahead = False  # "If there's more you want, say the word and I'll add it": the step is for the more
    asks_more = _THAT_ALL.search(norm_asking) is not None and (_has(norm_asking, _OPEN_STRONG_PHRASES) or (
        not cued and _has(norm_asking, _OPEN_WEAK_PHRASES)))  # "Any must-haves, or is that the lot?"
    if confirm and asks_more:
        confirm = go_ahead = False  # "Anything else, or is that everything?" asks for more, no leave to act
    if confirm and not beside_topic and not _TAG_QUESTION.search(text) and ((cued and (_asks_topic(opening) or _topic_clause(asking)))
                                                       or (listed and (_RATHER.search(norm_grounds) or _values_or(
                                                           norm_grounds, values_in_play)))
                                                       or (cued and _ANOTHER_OF.search(norm_grounds))
                                                       or _ONE_OR_MORE.search(norm_grounds)):
        confirm = go_ahead = False  # "..., so which size shall I add?", "I will need the number of units you'd like to
        # order", "Shall I pop the steel one in, or would you rather ceramic or wood?": the topic is asked
    if confirm and not beside_topic and (cued or listed) and (norm_asking.startswith(_WH_START) or _intent_then_topic(asking, listed) or (
            " confirm " in norm_asking and not _has(norm_asking.replace(" confirm ", " "), _CONFIRM_PHRASES))):
        confirm = False  # "could you confirm your size?", "which size shall I put in?" ask the size
    if (topics or not confirm) and "?" in asking and _approves_summary(asking, in_play):
        confirm, topics = True, set()  # "Atlas 22 in size M - everything is correct?": the summary's values are told
    if go_ahead and "?" not in asking and all(_assent_for_step(s) for s in _SENTENCE.findall(asking) if s.strip()):
        # "If you agree, I send the order for the Trek 9 in size 10.": the step waits on the customer's assent, the
        # values it names are told
        confirm, topics = True, set()
    if confirm and go_ahead and topics and _summary_then_go_ahead(asking):
        topics = set()  # "Two pairs in size 10 - shall I check out?": the summary before the go-ahead asks nothing
    if not confirm and asking is not text and len(norm_asking.split()) <= 6 and _ACCEPT_OFFER.search(norm_asking) and (
            _ACTION_OFFER.search(norm) is not None):
        confirm = True  # "I can refund you in full. Would you like that?" asks leave for the step just offered
    if not confirm and not topics and not asks_more and ((_APPROVAL.search(norm_asking) is not None and not norm_asking.startswith(_WH_START)) or (
            _BARE_APPROVAL.match(norm_asking) is not None) or (
            _has(norm_asking, _SATISFIED) and not norm_asking.startswith(_WH_START))):
        confirm = True
    if dates and not confirm:
        which = True
    if orders:
        # A question about a past order asks for no requirement: which line is meant (its item, when, what it
        # cost, a detail of it), why it goes back, or the go-ahead.
        if reason and not (len(set(dates)) >= 2 or _has(_MEANING.sub(" ", norm_asking), _WHICH_ORDER_PHRASES)):
            which = False  # "Which of these fits: faulty, damaged or no longer needed?" asks the reason alone
        which = which or (reason and _asks_line_beside(asking, in_play))
        if not reason and confirm and (_CONFIRM_FACT.search(norm_asking) or (len(items) >= 2 and " or " in norm_asking)):
            which, confirm = True, False  # "Can you confirm it's the September 10 order?", "return the X or the Y?"
        if which and go_ahead and len(set(dates)) < 2 and " or " not in norm_asking and not _has(
                norm_asking, _WHICH_ASKS_PHRASES):
            which = False  # "Shall I start a return for the order from September 10?": the date names what to return
        if which or reason:
            # "What went wrong, and shall I start the return?": a go-ahead asked in a question of its own, beside why
            confirm = reason and go_ahead and _go_ahead_beside_reason(asking)
            return Reading(True, confirm=confirm, which=which, reason=reason, stock_out=stock_out, items=items)
        about_line = _asks_about_line(asking.lower()) or (not confirm and bool(
            items or cued or topics or _has(norm_asking, _ORDER_WORDS) or _has(norm_asking, _MONTH_WORDS)
            or _has(norm_asking, _LINE_REFERENCE)))
        return Reading(True, confirm=confirm, which=about_line, stock_out=stock_out, items=items)
    bare_preference = not topics and not confirm and _BARE_PREFERENCE.match(_FILLER.sub(" ", norm_asking)) is not None
    if not topics and not confirm and asking is not text and (
            bare_preference or _BARE_WHICH_QUESTION.match(_FILLER.sub(" ", norm_asking))):
        # "Ceramic or wood also available. Which one for you?": a bare "which" asks among the values said before it (the
        # store's values where none in play is said twice)
        plain_text = _without_item_names(norm, in_play)
        offered = [t for t, (count, _) in _named_values(text, plain_text, in_play).items() if count >= 2] or [
            t for t, (count, _) in _named_values(text, plain_text, STORE_VALUES).items() if count >= 2]
        counted = _COUNTED_KINDS.search(norm)
        if len(offered) == 1:
            topics.add(offered[0])
        elif not offered and counted:
            # "The Terra 5 comes in two versions. Which you want?", "... in three materials. Which one?": the kinds counted
            named = {t for t, phrases in _TOPIC_PHRASES.items() if _has(f" {counted.group(1)} ", phrases)}
            topics |= named if len(named) == 1 else ({VARIANT} if in_play.items and not named else set())
    if not topics and asking is not text and len(norm_asking.split()) <= 10 and _BACK_REQUEST.match(_FILLER.sub(" ", norm_asking)):
        # "The Terra 5 needs a material and the Trek 9 a size. What are they to be?", "..., the Bolt 3 needs a connector.
        # Fill me in on both and I'll execute.": what the items need, said before, is what is asked
        for sentence in _SENTENCE.findall(text):
            said = _corrected(_normalise(sentence))
            need = _ITEMS_NEED.search(said)
            if sentence not in asking and (need is not None or (";" in sentence and _FIELD_LIST.match(said))):
                # (or a list of what each item needs, without a verb: "For the hoodie, a colour; for the shoes, a size.")
                topics |= {t for t, phrases in _TOPIC_PHRASES.items() if _has(need.group(1) if need else said, phrases)}
        if topics and confirm and _PROMISE_AFTER.search(norm_asking) and not _asks_go_ahead(_PROMISE_AFTER.sub(" ", norm_asking)):
            confirm = go_ahead = False  # "... Fill me in on both and I'll execute.": the step is promised, no leave asked
    if not topics and not confirm and in_play.items and _has(_YOUR_STYLE.sub(" ", _OWN_OPTIONS.sub(" ", norm_asking)),
                                                             _VARIANT_PHRASES):
        # "which version?" of an item in play (with none, as in a recommendation, no version to choose); not the
        # options the agent gathers ("Before I put options together, does any item need ...?")
        topics.add(VARIANT)
    strong_text = _ALTERNATIVE.sub(" ", norm_asking) if topics else norm_asking
    if topics and (_ELSE_CLOSES_LIST.search(asking.lower()) or (listed and _SOMETHING_LIKE.search(norm_asking))):
        # "a laptop, a tablet, something else?", "something more understated, like navy or black?": the values say
        # what the other thing is
        for phrase in (" something else ", " anything else ", " something more ", " anything more "):
            strong_text = strong_text.replace(phrase, " ")
    strong_text = _AT_LEAST.sub(" ", strong_text)  # "4 or more you need?" counts what is asked, it asks no more
    if topics and _STRONG_ON_TOPIC.search(strong_text):
        # "any other colour?", "additional ports?", "tell me more about the size": the words that ask openly are
        # about the topic they name, so only that topic is asked (an open reading says every withheld value)
        strong_text = _STRONG_ON_TOPIC.sub(" ", strong_text)
        if confirm and not (_ACTION_OFFER.search(norm_asking) or _WANT_DONE.search(norm_asking)):
            confirm = go_ahead = False  # "Any other colour you'd be happy with?": the topic is asked, no leave
    open_question = _has(strong_text, _OPEN_STRONG_PHRASES) or (not topics and nothing_more) or (
        not confirm and not bare_preference and " instead " not in norm_asking and (
        (not topics and _open_weak(asking, norm_asking) and not _offers_options(asking))
        or (bool(topics) and (_open_with_examples(asking) or _OPEN_NOUN_LISTED.search(asking) is not None
                              or _requirements_asked_apart(asking)))))
    if open_question and confirm and not _TAG_QUESTION.search(text) and _PROMISE_AFTER.search(norm_asking) and not (
            _asks_go_ahead(_PROMISE_AFTER.sub(" ", norm_asking))):
        confirm = False  # "Tell me a bit more about what you want and I'll sort it.": the step is promised, no leave asked
    return Reading(True, frozenset(topics), open_question, confirm, False, reason, stock_out, items)
