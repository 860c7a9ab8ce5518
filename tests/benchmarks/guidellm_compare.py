"""Our load generator against GuideLLM on the same simulator (not collected by pytest; run on demand, not in CI: it
needs GuideLLM, which is not one of our dependencies).

    python3 -m venv /tmp/gvenv && /tmp/gvenv/bin/pip install guidellm
    .venv/bin/python tests/benchmarks/guidellm_compare.py --guidellm /tmp/gvenv/bin/guidellm

The simulator (`python -m benchmarks_app.simserver`, Llama-3-8B on one L4, `--speedup 4`) runs in its own process.
GuideLLM runs a closed loop (`--profile kind=concurrent,streams=C`) of N synthetic chat requests; it needs a
tokenizer, and nothing can be downloaded here, so a word-level tokenizer is built on the spot (the simulator counts
whitespace-separated words as tokens, so the two agree on what a token is). Our generator then runs the same load:
chat, C clients, N requests, as many input tokens as the simulator counted in GuideLLM's prompts, the same output
length. Both results are imported by our importers (GuideLLM's JSON and ours) and compared on METRICS.md's footing:
TTFT, TPOT, ITL, E2E (mean, p50, p95) and output tokens per second. Target: within 10% of each other. The
simulator's step is discrete (a token every ~16 ms at speedup 4), so TTFT depends on where in a step a request
arrives: it is the noisiest figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

MODEL = "meta-llama/Meta-Llama-3-8B"
TOKENIZER_SCRIPT = """
import sys
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast
words = ["[UNK]"] + sorted(set("the of and to a in is was he for it with as his on be at by had are but from or have "
                             "an they which one you were her all she there would their we him been has when who will "
                             "more no if out so said what up its about into than them can only other new some could "
                             "time these two may then do first any my now such like our over man me even most made "
                             "after also did many before must through back years where much your way".split()))
tokenizer = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
tokenizer.decoder = decoders.WordPiece(prefix="##")
PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]").save_pretrained(sys.argv[1])
"""


def _wait_healthy(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("the simulator exited")
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit("the simulator did not start")


def _figures(path: Path) -> dict[str, float | None]:
    from benchmarks_app.results.detect import import_text

    _fmt, (run,) = import_text(path.read_text())
    figures: dict[str, float | None] = {}
    for key in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"):
        stat = run.metrics.get(key)
        for part in ("mean", "p50", "p95"):
            figures[f"{key} {part}"] = getattr(stat, part, None) if stat else None
    figures["output tok/s"] = run.output_tokens_per_s
    figures["completed"] = run.completed
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--guidellm", default="guidellm", help="the guidellm executable")
    parser.add_argument("--port", type=int, default=8091)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--prompt-tokens", type=int, default=512, help="GuideLLM's synthetic prompt_tokens")
    parser.add_argument("--output-tokens", type=int, default=32)
    args = parser.parse_args()
    guidellm = Path(args.guidellm)
    if not guidellm.exists():
        print(f"GuideLLM is not installed ({guidellm}): nothing compared")
        return 0
    python = guidellm.parent / "python"
    url = f"http://127.0.0.1:{args.port}"
    simulator = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchmarks_app.simserver",
            "--model",
            MODEL,
            "--gpu",
            "nvidia-l4-24gb",
            "--port",
            str(args.port),
            "--speedup",
            "4",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_healthy(url, simulator)
        with tempfile.TemporaryDirectory() as folder:
            work = Path(folder)
            subprocess.run([str(python), "-c", TOKENIZER_SCRIPT, str(work / "tok")], check=True)
            theirs = work / "guidellm.json"
            subprocess.run(
                [
                    str(guidellm),
                    "run",
                    "--backend",
                    f"kind=openai_http,target={url},model={MODEL}",
                    "--profile",
                    f"kind=concurrent,streams={args.concurrency}",
                    "--constraint",
                    f"kind=max_requests,count={args.requests}",
                    "--tokenizer",
                    f"kind=huggingface_auto,model={work / 'tok'}",
                    "--data",
                    f"kind=synthetic_text,prompt_tokens={args.prompt_tokens},output_tokens={args.output_tokens}",
                    "--output",
                    f"kind=json,path={theirs}",
                    "--disable-console",
                ],
                check=True,
                env={**os.environ, "HF_HUB_OFFLINE": "1"},
            )
            served = json.loads(theirs.read_text())["benchmarks"][0]["requests"]["successful"]
            input_tokens = round(statistics.mean(item["prompt_tokens"] for item in served))
            ours = work / "ours.json"
            # the chat template adds a few tokens: send fewer words so the server counts the same input
            probe = (
                httpx.post(
                    url + "/v1/chat/completions",
                    json={"model": MODEL, "max_tokens": 1, "messages": [{"role": "user", "content": "x"}]},
                    timeout=30,
                ).json()["usage"]["prompt_tokens"]
                - 1
            )
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "llm_sizing_loadgen",
                    "run",
                    "--base-url",
                    url,
                    "--model",
                    MODEL,
                    "--api",
                    "chat",
                    "--concurrency",
                    str(args.concurrency),
                    "--requests",
                    str(args.requests),
                    "--input-tokens",
                    str(max(1, input_tokens - probe)),
                    "--output-tokens",
                    str(args.output_tokens),
                    "--stream",
                    "--out",
                    str(ours),
                    "--quiet",
                ],
                cwd=ROOT,
                check=False,
            )
            mine, other = _figures(ours), _figures(theirs)
    finally:
        simulator.terminate()
        simulator.wait(timeout=10)
    print(
        f"closed loop of {args.concurrency}, {args.requests} chat requests, {input_tokens} input tokens as the "
        f"server counted them, {args.output_tokens} output tokens; simulator: Llama-3-8B on one L4, speedup 4"
    )
    print(f"{'figure':<16}{'ours':>12}{'GuideLLM':>12}{'difference':>12}")
    misses = 0
    for key in mine:
        a, b = mine[key], other[key]
        if a is None or b is None:

            def shown(value: float | None) -> str:
                return "—" if value is None else f"{value:.2f}"

            print(f"{key:<16}{shown(a):>12}{shown(b):>12}{'n/a':>12}")
            continue
        difference = (a - b) / b if b else 0.0
        judged = key != "completed" and not key.startswith("ttft")
        misses += judged and abs(difference) > 0.10
        print(f"{key:<16}{a:>12.2f}{b:>12.2f}{difference:>+11.1%}{'' if judged else '  (reported)'}")
    print("target (within 10%, TTFT reported):", "met" if not misses else f"missed on {misses} figure(s)")
    return 1 if misses else 0


if __name__ == "__main__":
    raise SystemExit(main())
