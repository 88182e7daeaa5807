"""The facts a CART verdict rests on: per wanted item (the accepted alternative of a sold-out one), its name,
variant value and quantity as the shopper says them (or askable when withheld), the product and its variant as
a tool shows them, and whether the final cart holds it."""

from __future__ import annotations

from typing import Any

from ecomrlve.envs.explain import Fact, Failure, Said, Shown, Transcript, Verdict

_CART_TOOLS = ("cart_add", "cart_set_quantity", "cart_view")  # each returns the whole cart


def final_cart(transcript: Transcript, before: int | None = None) -> list[tuple[str, str | None, int]]:
    """The cart the last cart tool result showed: (product id, variant id, quantity) per line."""
    lines: list[Any] = []
    for turn, result in transcript.results(*_CART_TOOLS):
        if not isinstance(result, dict) or (before is not None and turn > before):
            continue
        if isinstance(result.get("lines"), list):
            lines = result["lines"]
    return [(str(x.get("product_id")), x.get("variant_id"), int(x.get("quantity", 0))) for x in lines if isinstance(x, dict)]


def _name(phrase: str) -> str:
    return phrase[4:] if phrase.startswith("the ") else phrase


def cart(goal: dict[str, Any], task: dict[str, Any], answer: dict[str, Any] | None, turn: int | None,
         transcript: Transcript) -> Verdict:
    withheld = {(int(i), str(k)) for i, k in goal.get("withheld", [])}
    held = final_cart(transcript, turn)
    facts: list[Fact] = []
    failures: list[Failure] = []
    for i, item in enumerate(goal.get("items", [])):
        alternative = item.get("alternative")
        if item.get("stock_out") and alternative and transcript.locate(Said((_name(alternative["full_phrase"]),))):
            facts.append(Fact(f"item {i + 1} sold out", "true",
                              (Shown(item["product_id"], "in_stock", equals="false"), Said(("out of stock", "sold out")))))
            item, asked = alternative, f"item {i + 1} (alternative)"
        else:
            asked = f"item {i + 1}"
        pid, vid, quantity = item["product_id"], item.get("variant_id"), int(item.get("quantity", 1))
        facts.append(Fact(f"{asked} wanted", _name(item["phrase"]), Said((_name(item["phrase"]), _name(item["full_phrase"])))))
        in_cart = sum(q for p, v, q in held if p == pid and (vid is None or v == vid))
        facts.append(Fact(f"{asked} product", pid, Shown(pid, "product_id")))
        if vid is not None and item.get("variant_attribute") and item.get("variant_value") is not None:
            attribute, value = item["variant_attribute"], item["variant_value"]
            facts.append(Fact(f"{asked} {attribute}", value, Said((value,)), askable=(i, "variant") in withheld))
            facts.append(Fact(f"{asked} variant {vid}", value, Shown(vid, attribute, id_key="variant_id", equals=value),
                              met=any(p == pid and v == vid for p, v, _ in held), requires=f"{asked} {attribute}"))
        if quantity > 1:
            q = str(quantity)
            facts.append(Fact(f"{asked} quantity", q, Said((f"{q} of", f"{q}x", f"x{q}", f"{q} units")),
                              askable=(i, "quantity") in withheld))
        if in_cart != quantity:
            item_facts = tuple(f.name for f in facts if f.name.startswith(asked + " "))
            failures.append(Failure(f"{asked}: the cart holds {in_cart} of {quantity} wanted unit(s) of {pid}"
                                    + (f" in variant {vid}" if vid else ""), item_facts))
    if answer is None:
        failures.append(Failure("no answer"))
    if task.get("confirmed") is False:
        failures.append(Failure("the shopper asked to confirm the cart first; the final cart was not confirmed"))
    wanted = {f.value for f in facts if f.name.endswith(" product")}
    extra = [p for p, _, _ in held if p not in wanted]
    if extra:
        failures.append(Failure(f"the cart holds products not asked for: {', '.join(sorted(set(extra)))}"))
    return Verdict(tuple(facts), turn, (), tuple(failures))
