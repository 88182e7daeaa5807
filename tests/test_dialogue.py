"""The shopper's reading of the agent's words: which products a message names."""

from __future__ import annotations

from ecomrlve.user.dialogue import ItemNames, referenced

SHIRT = ItemNames("PAAAAAAA1", "tavernel", "air 68", "t-shirt")
SHOE = ItemNames("PAAAAAAA2", "ostrava home", "classic 66", "running shoe")
LEASH = ItemNames("PAAAAAAA3", "tavernel", "pro 2", "dog leash")


def test_a_question_naming_several_items_refers_to_each_of_them():
    text = "for the official tavernel air 68 t-shirt, which size? also the ostrava home classic 66 running shoe?"
    assert referenced(text, [SHIRT, SHOE, LEASH]) == [0, 1]


def test_without_a_model_name_the_strongest_brand_and_type_match_wins():
    assert referenced("which size for the tavernel t-shirt?", [SHIRT, SHOE, LEASH]) == [0]
    assert referenced("anything from tavernel?", [SHIRT, SHOE, LEASH]) == [0, 2]
    assert referenced("hello there", [SHIRT, SHOE, LEASH]) == []
    assert referenced("is paaaaaaa2 ok?", [SHIRT, SHOE, LEASH]) == [1]
