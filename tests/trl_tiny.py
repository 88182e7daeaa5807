"""A tiny tool-calling chat model built offline, for the TRL tests (no download, seconds on CPU).

A byte-level BPE tokenizer trained on the episode's own prompt, TRL's Qwen2.5 chat template (tool
calls as ``<tool_call>`` blocks, which TRL knows how to parse), and a randomly initialised
one-layer Qwen2 taught by a few dozen gradient steps to open with one tool call.
"""

from __future__ import annotations

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
from trl.chat_template_utils import qwen2_5_chat_template

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def tiny_tokenizer(corpus: list[str]) -> PreTrainedTokenizerFast:
    model = Tokenizer(models.BPE())
    model.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    model.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=4000, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    model.train_from_iterator(corpus, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=model, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                        additional_special_tokens=SPECIAL[1:])
    tokenizer.chat_template = qwen2_5_chat_template
    return tokenizer


def tiny_model(tokenizer: PreTrainedTokenizerFast, seed: int = 0) -> Qwen2ForCausalLM:
    torch.manual_seed(seed)
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=48, intermediate_size=96, num_hidden_layers=1,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32768,
                         pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
                         tie_word_embeddings=True)
    return Qwen2ForCausalLM(config)


def teach(model: Qwen2ForCausalLM, prompt_ids: list[int], completion_ids: list[int], steps: int = 300,
          confidence: float = 0.99) -> int:
    """Gradient steps on one prompt -> completion until every completion token, teacher-forced, has probability
    at least ``confidence`` (returns the steps taken).

    GRPOTrainer samples (at its temperature), it does not decode greedily: a model taught only until the
    argmax is right keeps near-even margins, and whether a sampled rollout follows the completion is then
    chance that any change of the prompt's words (so of the tokenizer and the model) redraws. At 0.99 per
    token a completion of n tokens is sampled whole with probability at least 0.99^n at temperature 1, and
    all but surely at a lower one (greedy decoding follows it too: 0.99 > 1/2 is the argmax).
    """
    ids = torch.tensor([prompt_ids + completion_ids])
    labels = ids.clone()
    labels[0, :len(prompt_ids)] = -100
    targets = ids[0, len(prompt_ids):, None]
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    for step in range(steps):
        output = model(input_ids=ids, labels=labels)
        probabilities = output.logits[0, len(prompt_ids) - 1:-1].detach().softmax(-1).gather(1, targets)
        if probabilities.min().item() >= confidence:
            return step
        optimizer.zero_grad()
        output.loss.backward()
        optimizer.step()
    raise AssertionError(f"the tiny model did not learn its completion in {steps} steps")
