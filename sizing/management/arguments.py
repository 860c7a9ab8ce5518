"""Argument parsing shared by the commands other tools rely on (`estimate`, `simulate`): bad arguments print one
line on stderr, `<command>: error: ...`, and exit with code 2; numbers are checked where they are read."""

from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn

from django.core.management.base import CommandParser


def fail(command: str, message: str) -> NoReturn:
    sys.stderr.write(f"{command}: error: {message}\n")
    sys.exit(2)


def one_line_parser(parser: CommandParser, command: str) -> CommandParser:
    """Make `parser` report errors as one line and exit 2 (argparse's default prints usage first)."""

    class _OneLine(CommandParser):
        def error(self, message: str) -> NoReturn:
            fail(command, message)

    parser.__class__ = _OneLine
    return parser


def _number(text: str, kind: type) -> Any:
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if kind is int else 'a number'}") from None


def positive_int(text: str) -> int:
    value = _number(text, int)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be ≥ 1")
    return value


def non_negative_int(text: str) -> int:
    value = _number(text, int)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} must be ≥ 0")
    return value


def positive_float(text: str) -> float:
    value = _number(text, float)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{value} must be a finite number > 0")
    return value


def fraction(text: str) -> float:
    value = _number(text, float)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{value} must be in (0, 1]")
    return value
