"""The masked actor-critic and PolicyAgent: illegal actions get zero probability, the update's
recomputed distribution matches the acting one, and the agent plays legal, reproducible games."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from piquet_agents.loop import play_game
from piquet_agents.policy import ActorCritic, PolicyAgent
from piquet_env.agent import RandomAgent, Turn
from piquet_env.game import Game
from piquet_env.observation import encoder_for
from piquet_env.rules import STANDARD, make_rules

ENC = encoder_for(STANDARD)


def small_model(seed: int = 0) -> ActorCritic:
    torch.manual_seed(seed)
    return ActorCritic(ENC.size, ENC.n_actions, hidden=(32,), activation="relu")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), min_size=35, max_size=35).filter(any), st.integers(0, 2**16))
def test_illegal_actions_get_exactly_zero_probability(legal: list[bool], seed: int) -> None:
    model = small_model()
    # Scale the head up so that masked logits would otherwise dominate.
    with torch.no_grad():
        model.policy_head.weight.mul_(1000)
    gen = torch.Generator().manual_seed(seed)
    obs = torch.randn(4, ENC.size, generator=gen)
    mask = torch.tensor([legal] * 4, dtype=torch.int8)
    logits, _ = model(obs, mask)
    probs = torch.softmax(logits, -1)
    assert torch.all(probs[:, ~torch.tensor(legal)] == 0)
    assert torch.allclose(probs.sum(-1), torch.ones(4))
    actions, logp, _ = model.act(obs, mask, generator=gen)
    assert all(legal[a] for a in actions.tolist())
    # The update recomputes the same log-probabilities from the stored mask; entropy is finite.
    logp2, entropy, _ = model.evaluate_actions(obs, mask, actions)
    assert torch.allclose(logp, logp2)
    assert torch.isfinite(entropy).all() and (entropy >= -1e-6).all()


def test_single_legal_action_has_probability_one_and_zero_entropy() -> None:
    model = small_model()
    mask = torch.zeros(1, ENC.n_actions, dtype=torch.int8)
    mask[0, 7] = 1
    obs = torch.randn(1, ENC.size)
    logp, entropy, _ = model.evaluate_actions(obs, mask, torch.tensor([7]))
    assert logp.item() == pytest.approx(0.0, abs=1e-6)
    assert entropy.item() == pytest.approx(0.0, abs=1e-6)


def test_greedy_act_takes_the_most_probable_legal_action() -> None:
    model = small_model()
    obs = torch.randn(3, ENC.size)
    mask = torch.ones(3, ENC.n_actions, dtype=torch.int8)
    mask[:, ::2] = 0
    logits, _ = model(obs, mask)
    actions, _, _ = model.act(obs, mask, greedy=True)
    assert actions.tolist() == logits.argmax(-1).tolist()
    assert all(a % 2 == 1 for a in actions.tolist())


@pytest.mark.parametrize("state_size", [0, 7])
def test_the_actor_and_the_critic_each_run_alone(state_size: int) -> None:
    torch.manual_seed(0)
    model = ActorCritic(5, 3, hidden=(4,), state_size=state_size)
    obs = torch.randn(6, 5)
    mask = torch.tensor([[1, 0, 1]] * 6, dtype=torch.int8)
    state = torch.randn(6, state_size) if state_size else None
    logits, values = model(obs, mask, state)
    ran: list[str] = []
    for name in ("trunk", "policy_head", "critic_trunk", "value_head"):
        module = getattr(model, name)
        if module is not None:
            module.register_forward_hook(lambda *_, name=name: ran.append(name))
    assert torch.equal(model.logits(obs, mask), logits)
    assert ran == ["trunk", "policy_head"]
    ran.clear()
    assert torch.equal(model.values(obs if state is None else state), values)
    assert ran == (["trunk", "value_head"] if state is None else ["critic_trunk", "value_head"])


def test_bad_architecture_is_rejected() -> None:
    with pytest.raises(ValueError, match="activation"):
        ActorCritic(10, 5, activation="gelu")
    with pytest.raises(ValueError, match="hidden"):
        ActorCritic(10, 5, hidden=())


@pytest.mark.parametrize("greedy", [True, False])
def test_policy_agent_plays_legal_games(greedy: bool) -> None:
    agent = PolicyAgent(small_model(), STANDARD, greedy=greedy, seed=3)
    for seed in range(3):
        g = play_game(Game(STANDARD, seed=seed, mode="deal"), [agent, RandomAgent(seed=seed)])
        assert g.is_over and sum(g.result) == 0


def test_sampled_play_is_reproducible_given_the_seed() -> None:
    agent = PolicyAgent(small_model(), STANDARD, greedy=False)

    def actions(seed: int) -> list[int]:
        agent.reset(seed)
        g = Game(STANDARD, seed=11, mode="deal")
        out = []
        while not g.is_over:
            a = agent.act(Turn(g, g.current_player))
            out.append(a)
            g.apply(a)
        return out

    assert actions(5) == actions(5)
    assert actions(5) != actions(6)


def test_policy_agent_refuses_other_rules() -> None:
    agent = PolicyAgent(small_model(), STANDARD)
    g = Game(make_rules("classic"), seed=1)
    with pytest.raises(ValueError, match="trained for rules 'standard'"):
        agent.act(Turn(g, g.current_player))


def test_observation_and_mask_from_turn_reach_the_network() -> None:
    # The agent's choice is always legal even where the untrained network prefers another card.
    agent = PolicyAgent(small_model(), STANDARD)
    g = Game(STANDARD, seed=2)
    turn = Turn(g, g.current_player)
    assert agent.act(turn) in g.legal_actions()
    assert np.asarray(turn.action_mask).sum() == len(g.legal_actions())


# ---------------------------------------------------------------------------- ActorStack


def _nets(n: int, hidden: tuple[int, ...] = (16, 8), activation: str = "tanh") -> list:
    torch.manual_seed(0)
    return [ActorCritic(6, 5, hidden, activation) for _ in range(n)]


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_actor_stack_gives_each_row_its_own_network_s_logits(activation: str) -> None:
    from piquet_agents.network import ActorStack

    nets = _nets(4, activation=activation)
    obs = torch.randn(9, 6)
    mask = torch.randint(0, 2, (9, 5), dtype=torch.int8)
    mask[:, 0] = 1
    which = torch.tensor([3, 3, 0, 3, 1, 0, 3, 3, 1])  # uneven groups; network 2 plays no row
    stacked = ActorStack(nets).logits(which, obs, mask)
    alone = torch.cat(
        [nets[int(w)](obs[i : i + 1], mask[i : i + 1])[0] for i, w in enumerate(which)]
    )
    assert torch.allclose(stacked, alone, atol=1e-5)
    half = ActorStack(nets, torch.bfloat16).logits(which, obs, mask).float()
    legal = mask == 1
    assert torch.allclose(half[legal], alone[legal], atol=0.05)
    assert (half[~legal] < -1e8).all()


def test_actor_stack_routes_samples_and_refuses_mixed_networks() -> None:
    from piquet_agents.network import ActorStack

    nets = _nets(3)
    with torch.no_grad():
        for j, net in enumerate(nets):  # network j plays action j + 1, always
            net.policy_head.bias.fill_(0.0)
            net.policy_head.bias[j + 1] = 100.0
    which = torch.tensor([2, 0, 1, 1, 2, 0])
    acts = ActorStack(nets).act(which, torch.randn(6, 6), torch.ones(6, 5, dtype=torch.int8))
    assert acts.tolist() == (which + 1).tolist()
    with pytest.raises(ValueError, match="one architecture"):
        ActorStack([*nets, ActorCritic(6, 5, (4,))])
    with pytest.raises(ValueError, match="at least one"):
        ActorStack([])


def test_a_frozen_copy_holds_the_weights_of_its_moment() -> None:
    """``ActorCritic.frozen_copy``, the one copy a snapshot, a magnet, an opponent and an
    evaluation take: the same weights, in evaluation mode, without gradients, and apart from the
    network it was copied from (training it later changes nothing of the copy)."""
    import torch

    from piquet_agents.network import ActorCritic

    net = ActorCritic(10, 4, (8,), "tanh", 6)
    copy = net.frozen_copy()
    before = {k: v.clone() for k, v in copy.state_dict().items()}
    assert all(torch.equal(before[k], v) for k, v in net.state_dict().items())
    assert not copy.training and not any(p.requires_grad for p in copy.parameters())
    assert copy.arch() == net.arch() and next(copy.parameters()).device.type == "cpu"
    with torch.no_grad():
        for p in net.parameters():
            p.add_(1.0)
    assert all(torch.equal(before[k], v) for k, v in copy.state_dict().items())
    assert any(p.requires_grad for p in net.parameters())
