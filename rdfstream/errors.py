"""Errors raised by rdfstream.  Every user-facing error carries a location when one is known.

Exit codes used by the CLI (rdflib/pyshacl conventions): 0 ok, 1 runtime failure,
2 usage / parse / compile error, 3 unsupported construct.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    """A source position: 1-based line and column, optionally the file it came from."""

    line: int
    col: int
    source: str | None = None

    def __str__(self) -> str:
        where = f"{self.source}:" if self.source else ""
        return f"{where}{self.line}:{self.col}"


class RdfstreamError(Exception):
    """Base class.  ``exit_code`` is what the CLI exits with."""

    exit_code = 1

    def __init__(self, message: str, span: Span | None = None, text: str | None = None):
        super().__init__(message)
        self.message = message
        self.span = span
        self.text = text

    def with_source(self, source: str) -> RdfstreamError:
        if self.span is not None and self.span.source is None:
            self.span = Span(self.span.line, self.span.col, source)
        return self

    def __str__(self) -> str:
        loc = f"{self.span}: " if self.span else ""
        return f"{loc}{self.message}"


class ParseError(RdfstreamError):
    exit_code = 2


class CompileError(RdfstreamError):
    """The program parsed but cannot be evaluated: unsafe rule, unstratifiable negation, ..."""

    exit_code = 2


class UnsafeRuleError(CompileError):
    pass


class StratificationError(CompileError):
    pass


class StreamFormatError(RdfstreamError):
    """A malformed line in a stream file."""

    exit_code = 2


class UnsupportedError(RdfstreamError):
    exit_code = 3


class EvaluationError(RdfstreamError):
    exit_code = 1


class UsageError(RdfstreamError):
    """Bad command line or unreadable file."""

    exit_code = 2
