"""ClipfoldError: an export's failure, raised into Python code."""

from __future__ import annotations

from typing import Optional

#: The error codes of docs/spec.md#errors-and-limits, the first word of an export's error string.
EXPORT_CODES = frozenset({"invalid_json", "invalid_input", "too_large", "host_error", "internal"})


class ClipfoldError(Exception):
    """A clipfold call failed.

    ``code`` is the error code of docs/spec.md#errors-and-limits (``invalid_json``, ``invalid_input``, ``too_large``,
    ``host_error``, ``internal``) when the plug-in reported the failure, or
    ``plugin_error`` when the Wasm runtime itself failed (a trap, a missing
    export). ``message`` is the text after the code; it names the offending
    field first, which is also available as ``field``.
    """

    def __init__(self, code: str, message: str, field: Optional[str] = None) -> None:
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message
        self.field = field

    @classmethod
    def from_plugin_error(cls, text: str) -> "ClipfoldError":
        """Parses the plug-in's "<code>: <field>: <what>" error string."""
        code, sep, rest = text.partition(": ")
        if not sep or code not in EXPORT_CODES:
            return cls("plugin_error", text, None)
        field: Optional[str] = None
        head, sep2, _ = rest.partition(": ")
        if sep2 and head and not any(ch.isspace() for ch in head):
            field = head
        return cls(code, rest, field)
