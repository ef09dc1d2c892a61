"""The two kinds of piece summary.json is built of: `Part` (its keys are its fields, and a
None is left out of the file) and `Record` (a nested object written as it was computed,
null included). Every summary model derives from one of them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer


class Part(BaseModel):
    """A piece of summary.json: its keys are its fields and no others.

    A misspelt key in the code that builds one is an error, not a number silently missing.
    Reading a file is lenient: `summary.run.parse_summary` ignores keys a newer judge added.
    """

    model_config = ConfigDict(extra="forbid")


class Record(Part):
    """A nested object written as it was computed: the fields that were set, each with its
    value, null included. Unlike the summary's own keys (None is left out), a null here says
    "computed, no value" (a κ of one class, a gate check with no data), and an absent key
    "not computed for this kind of run". These objects were dicts before they were typed,
    and the file keeps their shape.
    """

    @model_serializer(mode="wrap")
    def keys_as_set(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The set fields in declaration order; the caller's exclude_none stops here."""
        data: dict[str, Any] = handler(self)
        return {
            name: data.get(name)
            for name in type(self).model_fields
            if name in self.model_fields_set
        }
