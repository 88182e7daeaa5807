"""PD/SUB: every preference the ranking weighs is told when asked, and never denied.

The ranking (:func:`~ecomrlve.envs.recommend.requirements.relevance`) weighs price (the lower the better, no
appeal left from twice a reference), rating, shipping and popularity (SUB also likeness to the original); each weight
is positive. Asked about a topic (or "anything else?"), the shopper says each preference on it, with its strength and,
for price, where its appeal ends ("the further below $90, the better", never an ideal price the ranking does not
peak at), and never "no preference" on a weighed topic. Telling is not free to repeat: asking again
costs patience.
"""

from __future__ import annotations

import pytest

from ecomrlve.actions import AgentAction
from ecomrlve.envs.recommend import acts as A
from ecomrlve.envs.recommend.requirements import PREFERENCE_TOPICS
from ecomrlve.episode import EcomEnv
from ecomrlve.user.understanding import understand

QUESTIONS = {"price": "How much are you looking to spend?", "rating": "Do you care about the rating?",
             "shipping": "How fast do you need the delivery?", "popularity": "Should it be a popular one?",
             "similar": "Should it be similar to what you wanted?"}


def _weights(goal) -> dict[str, float]:
    prefs = goal.preferences
    weights = {"price": prefs.price, "rating": prefs.rating, "shipping": prefs.shipping, "popularity": prefs.popularity}
    if hasattr(goal, "original_row"):
        weights["similar"] = 0.5  # SUB's relevance: half similarity to the original
    return weights


def _said(env: EcomEnv, question: str) -> tuple[list, str]:
    observation = env.step(AgentAction(message=question))
    acts = [a for a in env.audit().problem.user.acts if isinstance(a, A.StateRequirements)]
    return acts, observation.messages[-1]["content"]


@pytest.mark.parametrize("env_id", ["PD", "SUB"])
def test_every_weighed_preference_is_told_when_its_topic_is_asked(catalog, search, env_id) -> None:
    env = EcomEnv(env_id, catalog=catalog, search=search, overrides={"p_noise": 0.0})
    for d in (0, 3, 7, 11, 15):
        for seed in range(8):
            for kind, question in QUESTIONS.items():
                env.reset(env_id=env_id, difficulty=d, seed=seed)
                goal = env.audit().problem.goal
                weight = _weights(goal).get(kind, 0.0)
                assert set(PREFERENCE_TOPICS[kind]) & understand(question).topics  # the shopper reads the topic
                acts, text = _said(env, question)
                told = [p for act in acts for p in act.preferences if p[0] == kind]
                denied = [t for act in acts for t in act.no_preference]
                if weight > 0:
                    assert told, (env_id, d, seed, kind, text)
                    assert told[0][1] == ("strong" if weight >= 0.5 else "mild")
                    assert not set(denied) & set(PREFERENCE_TOPICS[kind]), (env_id, d, seed, kind, text)
                if kind == "price":  # where the price stops appealing: twice the reference, within half a round step
                    no_appeal = 2 * goal.preferences.price_reference
                    assert abs(float(told[0][2]) - no_appeal) <= max(1.0, 0.25 * no_appeal / 2), (told, no_appeal)
                    assert f"${told[0][2]}" in text and "further" in text


@pytest.mark.parametrize("env_id", ["PD", "SUB"])
def test_anything_else_tells_every_preference_once_for_free(catalog, search, env_id) -> None:
    """An open question tells every weighed preference; repeating it tells nothing new and costs patience."""
    env = EcomEnv(env_id, catalog=catalog, search=search, overrides={"p_noise": 0.0})
    for seed in range(10):
        env.reset(env_id=env_id, difficulty=6, seed=seed)
        goal, user = env.audit().problem.goal, env.audit().problem.user
        weights = _weights(goal)
        acts, _ = _said(env, "Anything else I should know?")
        assert {p[0] for p in acts[-1].preferences} == {k for k, w in weights.items() if w > 0}
        patience = user.patience
        _said(env, "Anything else I should know?")
        assert user.patience == patience - 1
