"""Deterministic synthetic prompts of about N tokens, and the request bodies that carry them.

Assumption, stated once: a prompt of N tokens is N common English words, each written with a leading space
(" the", " water", ...). Each such word is one token in the BPE vocabularies of the models people serve (Llama 3,
Qwen, Mistral, GPT-style tiktoken vocabularies; SentencePiece "▁word" pieces in Llama 2). The count the client
sends (`input_tokens_sent`) is therefore approximate; the server's `usage.prompt_tokens` is authoritative and is what
the result records as `input_tokens` (it also counts the BOS token and the chat template). The two are compared only
to detect a truncated prompt, with a generous tolerance.

Structure of a prompt, so prefix caching behaves as the workload says:

    [shared prefix of the class: P words, the same for every request of the class]
    [nonce: 4 words spelling the request's index: no two requests share more than the class prefix]
    [body: N − P − 4 words from a fixed pseudo-random corpus, at an offset drawn per request]

Everything derives from the plan's seed: the same plan sends the same prompts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from llm_sizing_loadgen.plan import Api

# 256 common words: each is a single token with its leading space in the BPE vocabularies named above
WORDS = tuple(
    dict.fromkeys(
        """
the of and to in is was for on that with as by at from his her had are were this which have has not they
you all one their more been would there when who will its out into only other time some could them then than
what about also after first two new made most over such like years many any where those may these even very
people back still down well just should because each through much before own good long great being little state
world year used three same part again work under last might take place around while school never between life
both house city water small every along here name high day game found home war music family light old group
began end power area point right early house thing side word number left second hand known given often large
white later next line body head air land order city four five city end form group play open child light small
real past best field field kind night plan case help rest road near sea set half line king able change sound
child close form fire black early face food hard heard law less low mind move note paper plant party ready
red run short size stand story table tax test top town tree true wall wind wood yes young area bank bed bird
blue book born car care cell center cold cost court cross cut dark data deal deep door draw drive earth east
eye fact fall farm fear feel fine fish floor free full girl gold green grow hair heat hill hold hope horse
""".split()
    )
)
NONCE_WORDS = 4  # 256**4 distinct requests before two share a nonce
CORPUS_WORDS = 1 << 16
VOCABULARY = 256
assert len(WORDS) >= VOCABULARY  # noqa: S101 - an invariant of the table above


class PromptFactory:
    """Prompts of a seed: `text(index, class_index, input_tokens, prefix_tokens)`; cheap (one slice per part)."""

    def __init__(self, seed: int) -> None:
        rng = np.random.default_rng([seed, 0x50524F4D])  # "PROM": prompts apart from the lengths' stream
        words = [" " + word for word in WORDS[:VOCABULARY]]
        picks = rng.integers(0, VOCABULARY, size=CORPUS_WORDS)
        corpus = [words[i] for i in picks]
        self._text = "".join(corpus) * 2  # doubled: a slice never wraps
        lengths = np.fromiter((len(w) for w in corpus + corpus), dtype=np.int64, count=2 * CORPUS_WORDS)
        self._starts = np.concatenate([[0], np.cumsum(lengths)]).tolist()  # char offset of each word
        self._words = words
        self._seed = seed

    def _slice(self, offset: int, count: int) -> str:
        """`count` corpus words from `offset`, each with its leading space."""
        parts = []
        while count > 0:
            take = min(count, CORPUS_WORDS)
            start = offset % CORPUS_WORDS
            parts.append(self._text[self._starts[start] : self._starts[start + take]])
            count -= take
        return "".join(parts)

    def nonce(self, index: int) -> str:
        """The words that open request `index`'s varying part (servers and tests can key requests by them)."""
        return self._nonce(index, NONCE_WORDS).strip()

    def _nonce(self, index: int, count: int) -> str:
        digits = []
        value = index
        for _ in range(count):
            digits.append(self._words[value % VOCABULARY])
            value //= VOCABULARY
        return "".join(digits)

    def text(self, *, index: int, class_index: int, input_tokens: int, prefix_tokens: int = 0) -> str:
        """The prompt of request `index`: about `input_tokens` tokens, the first `prefix_tokens` shared by its
        class."""
        prefix_tokens = max(0, min(prefix_tokens, input_tokens - 1))
        rest = input_tokens - prefix_tokens
        nonce = min(NONCE_WORDS, rest)
        prefix = self._slice(class_index * 7919 + 1, prefix_tokens) if prefix_tokens else ""
        offset = (index * 104_729 + self._seed * 31 + 17) % CORPUS_WORDS
        body = self._slice(offset, rest - nonce)
        return (prefix + self._nonce(index, nonce) + body).lstrip(" ")


def request_body(
    *,
    api: Api,
    model: str,
    prompt: str,
    max_tokens: int,
    stream: bool,
    continuous_usage_stats: bool,
    ignore_eos: bool,
    min_tokens: int | None,
    extra: Mapping[str, Any],
) -> bytes:
    """The JSON body of one request (compact UTF-8).

    `stream_options.include_usage` makes the server send the final usage (N_out, N_in, cached tokens);
    `continuous_usage_stats` (vLLM, SGLang) puts the running usage on every event, which gives the tokens per event.
    `ignore_eos` (vLLM, SGLang, TensorRT-LLM) and `min_tokens` enforce the output length; `extra` is merged last.
    """
    body: dict[str, Any] = {"model": model}
    if api is Api.CHAT:
        body["messages"] = [{"role": "user", "content": prompt}]
    else:
        body["prompt"] = prompt
    body["max_tokens"] = max_tokens
    body["stream"] = stream
    if stream:
        options: dict[str, bool] = {"include_usage": True}
        if continuous_usage_stats:
            options["continuous_usage_stats"] = True
        body["stream_options"] = options
    if ignore_eos:
        body["ignore_eos"] = True
    if min_tokens is not None:
        body["min_tokens"] = min(min_tokens, max_tokens)
    body.update(extra)
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
