"""A minimal OpenAI-compatible streaming server on raw asyncio streams, for the load generator's tests and its
speed benchmark (no framework, so its own overhead is small and known).

- POST /v1/completions and /v1/chat/completions, HTTP/1.1 keep-alive, chunked SSE when `stream` is true: a role-only
  first event (chat), then `max_tokens` content events of one token each (`chunk` tokens per event if set), the
  final usage event (`stream_options.include_usage`) and `data: [DONE]`. `continuous_usage_stats` puts the running
  usage on every event. Without `stream`, one JSON answer.
- `usage.prompt_tokens` is the number of words of the prompt (what the generator's synthetic prompts aim at).
- Delays: `ttft_s` before the first content event, `itl_s` between events (0: everything written at once).
- Per request, the server's own monotonic timestamps (`time.perf_counter_ns`, CLOCK_MONOTONIC on Linux, so the same
  clock as the client's in another process): when the request's body was fully read (`recv_ns`) and just before the
  first content event was written (`first_ns`), keyed by the prompt's first four words (the generator's per-request
  nonce). `timings` holds them; `--timings FILE` writes them as JSON lines at exit.

    python tests/loadgen/sse_server.py --port 0 [--ttft-s 0] [--itl-s 0] [--timings t.jsonl]   # prints the port
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class SseServer:
    ttft_s: float = 0.0
    itl_s: float = 0.0
    chunk: int = 1
    timings: list[tuple[str, int, int]] = field(default_factory=list)  # (nonce, recv_ns, first_ns)
    requests: int = 0
    _server: asyncio.AbstractServer | None = None

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        self._server = await asyncio.start_server(self._connection, host, port, backlog=4096)
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        key, value = line.split(":", 1)
                        headers[key.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                recv_ns = time.perf_counter_ns()
                self.requests += 1
                if method != "POST" or path not in ("/v1/completions", "/v1/chat/completions"):
                    self._answer(writer, 404, {"error": {"message": f"no route {path}", "code": 404}})
                    await writer.drain()
                    continue
                await self._complete(writer, json.loads(body), chat=path.endswith("chat/completions"), recv_ns=recv_ns)
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    @staticmethod
    def _answer(writer: asyncio.StreamWriter, status: int, data: dict[str, Any]) -> None:
        payload = json.dumps(data).encode()
        writer.write(
            f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {len(payload)}\r\n\r\n".encode()
            + payload
        )

    async def _complete(self, writer: asyncio.StreamWriter, body: dict[str, Any], *, chat: bool, recv_ns: int) -> None:
        prompt = body["messages"][-1]["content"] if chat else body["prompt"]
        words = prompt.split()
        nonce = " ".join(words[:4])
        prompt_tokens = len(words)
        total = int(body.get("max_tokens") or 16)
        options = body.get("stream_options") or {}
        continuous = bool(options.get("continuous_usage_stats"))
        include_usage = bool(options.get("include_usage"))
        kind = "chat.completion.chunk" if chat else "text_completion"
        if not body.get("stream"):
            if self.ttft_s:
                await asyncio.sleep(self.ttft_s + self.itl_s * (total - 1))
            self.timings.append((nonce, recv_ns, time.perf_counter_ns()))
            text = " tok" * total
            choice = (
                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "length"}
                if chat
                else {"index": 0, "text": text, "finish_reason": "length"}
            )
            self._answer(
                writer,
                200,
                {
                    "id": "x",
                    "object": kind.removesuffix(".chunk"),
                    "choices": [choice],
                    "usage": {
                        "prompt_tokens": prompt_tokens,
                        "completion_tokens": total,
                        "total_tokens": prompt_tokens + total,
                    },
                },
            )
            await writer.drain()
            return
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")

        def send(data: dict[str, Any] | str) -> None:
            text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
            event = f"data: {text}\n\n".encode()
            writer.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")

        def usage(done: int) -> dict[str, int]:
            return {"prompt_tokens": prompt_tokens, "completion_tokens": done, "total_tokens": prompt_tokens + done}

        if chat:
            first: dict[str, Any] = {
                "id": "x",
                "object": kind,
                "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}],
            }
            if continuous:
                first["usage"] = usage(0)
            send(first)
        if self.ttft_s:
            await writer.drain()
            await asyncio.sleep(self.ttft_s)
        done = 0
        first_ns = 0
        while done < total:
            step = min(self.chunk, total - done)
            done += step
            text = " tok" * step
            finish = "length" if done == total else None
            choice = (
                {"index": 0, "delta": {"content": text}, "finish_reason": finish}
                if chat
                else {"index": 0, "text": text, "finish_reason": finish}
            )
            event: dict[str, Any] = {"id": "x", "object": kind, "choices": [choice]}
            if continuous:
                event["usage"] = usage(done)
            if not first_ns:
                first_ns = time.perf_counter_ns()
            send(event)
            if self.itl_s and done < total:
                await writer.drain()
                await asyncio.sleep(self.itl_s)
        if include_usage:
            send({"id": "x", "object": kind, "choices": [], "usage": usage(done)})
        send("[DONE]")
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        self.timings.append((nonce, recv_ns, first_ns))


async def _serve(args: argparse.Namespace) -> None:
    server = SseServer(ttft_s=args.ttft_s, itl_s=args.itl_s, chunk=args.chunk)
    port = await server.start(args.host, args.port)
    print(port, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    await server.close()
    if args.timings:
        with open(args.timings, "w", encoding="utf-8") as handle:
            for nonce, recv_ns, first_ns in server.timings:
                handle.write(json.dumps({"nonce": nonce, "recv_ns": recv_ns, "first_ns": first_ns}) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--ttft-s", type=float, default=0.0)
    parser.add_argument("--itl-s", type=float, default=0.0)
    parser.add_argument("--chunk", type=int, default=1)
    parser.add_argument("--timings", help="write per-request server timestamps here (JSON lines) at exit")
    asyncio.run(_serve(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
