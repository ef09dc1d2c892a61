"""The simulator's command-line settings read into its config: `--profile NAME:KEY=VALUE,...`
(a judge model's own noise, biases, style, formats, logprobs), `--style` and `--formats`;
a bad value is a ConfigError naming the flag and the fix.
"""

from __future__ import annotations

import math

from judgecli.errors import ConfigError
from judgecli.simulator.config import JudgeProfile
from judgecli.simulator.formats import ResponseFormats, parse_formats
from judgecli.simulator.styles import ReplyStyle

_SHARE_KEYS = {
    "noise": "noise",
    "position-bias": "position_bias",
    "length-bias": "length_bias",
    "jitter": "jitter",
}
_PROFILE_HINT = (
    "e.g. --profile cheap:noise=0.3,style=think (keys: noise, position-bias, length-bias, "
    "jitter, style, formats, logprobs)"
)


def parse_profiles(specs: list[str]) -> dict[str, JudgeProfile]:
    """`--profile NAME:KEY=VALUE[,KEY=VALUE...]` flags → {NAME: JudgeProfile}.

    The name ends at the last colon, so `ollama/llama3:8b:noise=0.1` names
    `ollama/llama3:8b` (values never hold a colon).
    """
    profiles: dict[str, JudgeProfile] = {}
    for spec in specs:
        name, _, pairs = spec.rpartition(":")
        if not name or not pairs:
            raise ConfigError(f"--profile {spec!r} is not NAME:KEY=VALUE", hint=_PROFILE_HINT)
        if name in profiles:
            raise ConfigError(
                f"--profile {name!r} is given twice",
                hint=f"put all its settings in one: --profile {name}:noise=0.3,position-bias=0.4",
            )
        profiles[name] = JudgeProfile(**dict(_profile_setting(spec, p) for p in pairs.split(",")))
    return profiles


def parse_server_settings(style: str, formats: str) -> tuple[ReplyStyle, ResponseFormats]:
    """The `--style` and `--formats` flag values, parsed; ConfigError naming the bad one."""
    return _style(style, "--style"), _formats(formats, "--formats")


def _style(text: str, where: str, hint: str | None = None) -> ReplyStyle:
    try:
        return ReplyStyle(text)
    except ValueError:
        styles = ", ".join(ReplyStyle)
        raise ConfigError(
            f"{where}: style needs one of {styles}, not {text!r}",
            hint=hint or f"e.g. {where} think",
        ) from None


def _formats(text: str, where: str, hint: str | None = None) -> ResponseFormats:
    try:
        return parse_formats(text)
    except ValueError as err:
        raise ConfigError(f"{where}: {err}", hint=hint or f"e.g. {where} llama-cpp") from None


def _profile_setting(spec: str, pair: str) -> tuple[str, object]:
    key, sep, text = (part.strip() for part in pair.partition("="))
    if key == "logprobs":
        if text.lower() not in ("true", "false"):
            raise ConfigError(
                f"--profile {spec!r}: logprobs needs true or false, not {pair.strip()!r}",
                hint=_PROFILE_HINT,
            )
        return "logprobs", text.lower() == "true"
    if key == "style":
        return "style", _style(text, f"--profile {spec!r}", _PROFILE_HINT)
    if key == "formats":
        return "formats", _formats(text, f"--profile {spec!r}", _PROFILE_HINT)
    if key not in _SHARE_KEYS:
        raise ConfigError(f"--profile {spec!r}: unknown key {key!r}", hint=_PROFILE_HINT)
    try:
        value = float(text) if sep else math.nan
    except ValueError:
        value = math.nan
    if not 0 <= value <= 1:  # also False for nan
        raise ConfigError(
            f"--profile {spec!r}: {key} needs a value from 0 to 1, not {pair.strip()!r}",
            hint=_PROFILE_HINT,
        )
    return _SHARE_KEYS[key], value
