"""A child process's answers, read on the event loop (``child.Answers``): every message as
``multiprocessing``'s ``Connection.send`` framed it — small ones, ones sent in two writes,
many at once — and the end of the pipe as the end."""

from __future__ import annotations

import asyncio
import os
import threading
from multiprocessing.connection import Connection
from typing import Any

import pytest

from pipelines.engine.child import Answers

MESSAGES: list[Any] = [
    ("page", [1, 2, 3]),
    ("page", {"text": "é" * 40_000}),  # past 16 KiB: the header and body are two writes
    ("end", None),
    *[("page", list(range(n))) for n in range(200)],
]


def test_every_message_sent_is_received_in_order_then_the_end() -> None:
    read_end, write_end = os.pipe()
    sender = Connection(write_end, readable=False)

    def send_all() -> None:  # more than the pipe holds: the reader must keep up
        for message in MESSAGES:
            sender.send(message)
        sender.close()

    async def receive_all() -> tuple[list[Any], bool]:
        answers = Answers(read_end)
        thread = threading.Thread(target=send_all)
        thread.start()
        received = [await answers.receive() for _ in MESSAGES]
        try:
            await answers.receive()
        except EOFError:
            ended = True
        else:
            ended = False
        answers.close()
        await asyncio.to_thread(thread.join, 60)
        return received, ended

    received, ended = asyncio.run(receive_all())

    assert received == MESSAGES
    assert ended, "a closed pipe is the end, not a wait"


def test_a_closed_reader_receives_nothing() -> None:
    read_end, write_end = os.pipe()
    os.close(write_end)
    answers = Answers(read_end)
    answers.close()
    with pytest.raises(EOFError):
        asyncio.run(answers.receive())
